package server

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestForwardBodies: the response to an absolute-form request reaches the client byte for byte, however its
// body is framed (a length, larger or smaller than what the head's read took along; the connection's end;
// chunks; none for a HEAD), and the client connection serves a next request after a body of known length, so
// the proxy read exactly that body from the host. A body shorter than its length ends the client connection
// before the client has it all.
func TestForwardBodies(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB: past what one read of the head takes
	big = append(big, "tail"...)
	type answer struct {
		raw   string // what the host sends, head and body
		close bool   // the host closes its connection after it
	}
	withLength := func(body string) answer {
		return answer{raw: fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)}
	}
	answers := map[string]answer{
		"/big":     withLength(string(big)),
		"/small":   withLength("hello"),
		"/empty":   withLength(""),
		"/chunked": {raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"},
		"/to-end":  {raw: "HTTP/1.0 200 OK\r\n\r\n" + string(big), close: true},
		"/short":   {raw: "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + string(big[:5000]), close: true},
	}
	port := originRaw(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			a, ok := answers[req.URL.Path]
			if !ok {
				a = answer{raw: "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"}
			}
			if req.Method == http.MethodHead {
				a.raw, _, _ = strings.Cut(a.raw, "\r\n\r\n")
				a.raw += "\r\n\r\n"
			}
			if _, err := io.WriteString(c, a.raw); err != nil || a.close {
				return
			}
		}
	})
	hostAddr := "127.0.0.1:" + strconv.Itoa(port)
	_, addr := startProxy(t, Config{Allow: allowList(t, hostAddr)})

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	get := func(method, path string) (*http.Response, []byte, error) {
		req, _ := http.NewRequest(method, "http://"+hostAddr+path, nil)
		if _, err := fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: %s\r\n\r\n", method, req.URL, req.URL.Host); err != nil {
			return nil, nil, err
		}
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return nil, nil, err
		}
		body, err := io.ReadAll(resp.Body)
		return resp, body, err
	}
	// One client connection: each request after the one before it, so each shows that the body before it
	// was read from the host to its end and no further.
	for _, tc := range []struct {
		method, path string
		want         string
	}{
		{"GET", "/big", string(big)},
		{"GET", "/small", "hello"},
		{"HEAD", "/big", ""},
		{"GET", "/empty", ""},
		{"GET", "/chunked", "hello world"},
		{"GET", "/small", "hello"},
		{"GET", "/big", string(big)},
	} {
		resp, body, err := get(tc.method, tc.path)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.method, tc.path, err)
		}
		if resp.StatusCode != 200 || !bytes.Equal(body, []byte(tc.want)) {
			t.Fatalf("%s %s: status %d, %d bytes (%.20q…), want 200 and %d bytes", tc.method, tc.path,
				resp.StatusCode, len(body), body, len(tc.want))
		}
		if tc.method == "HEAD" && resp.ContentLength != int64(len(big)) {
			t.Fatalf("HEAD: Content-Length %d, want %d", resp.ContentLength, len(big))
		}
	}
	// A body to the host's end of the connection: all of it, and the client connection ends with it.
	resp, body, err := get("GET", "/to-end")
	if err != nil || !bytes.Equal(body, big) || !resp.Close {
		t.Fatalf("to the end: %d bytes, close %v, %v; want %d bytes and the connection closed", len(body),
			resp != nil && resp.Close, err, len(big))
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("after a body to the end: the client connection is not closed (%v)", err)
	}

	c2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	// Not a measure of time: a proxy that kept the connection after a short body would leave the client
	// waiting for the rest until the idle timeout (2 minutes).
	_ = c2.SetDeadline(time.Now().Add(30 * time.Second))
	c, br = c2, bufio.NewReader(c2)
	if _, body, err := get("GET", "/short"); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a body shorter than its length: %d bytes, error %v; want io.ErrUnexpectedEOF", len(body), err)
	}
}
