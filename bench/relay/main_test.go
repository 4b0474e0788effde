package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// The test binary is also the program under test: started again with RELAY_TEST set, it runs main.
func TestMain(m *testing.M) {
	if os.Getenv("RELAY_TEST") != "" {
		main()
		return
	}
	os.Exit(m.Run())
}

// A connection through the relay carries what each side sends, whole, and each side's half-close reaches
// the other: an echo server that answers once its input ended gets all of it, and the client all it echoed.
func TestRelay(t *testing.T) {
	origin, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer origin.Close()
	go func() {
		for {
			c, err := origin.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b, _ := io.ReadAll(c) // until the client's half-close, passed on by the relay
				c.Write(b)
			}()
		}
	}()

	cmd := exec.Command(os.Args[0], origin.Addr().String())
	cmd.Env = append(os.Environ(), "RELAY_TEST=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("first line %q: %v", line, err)
	}

	for _, size := range []int{0, 1, 3 << 20} {
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Fatal(err)
		}
		want := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
		go func() {
			c.Write(want)
			c.(*net.TCPConn).CloseWrite()
		}()
		got, err := io.ReadAll(c)
		c.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%d bytes through the relay: got %d, err %v", size, len(got), err)
		}
	}
}
