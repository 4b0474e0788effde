// Command relay is the floor of the sandbox's network proxy (docs/benchmarks.md, issue 23: the proxy's
// floor): one hop in a connection's path with no work beside it. It listens on 127.0.0.1 (an ephemeral port,
// printed as a decimal line on stdout once it listens) and forwards every connection to ADDR, copying each
// way with io.Copy between the two TCP connections, which the kernel splices (the fastest of the relays
// measured, docs/benchmarks.md), and passing a half-close on. bench/proxy.py times a download through it
// beside one through agentbash's proxy, which relays a CONNECT tunnel and an absolute-form response's body
// the same way.
//
//	relay ADDR
//
// It runs until it is killed; a connection to ADDR that fails closes the accepted one.
package main

import (
	"fmt"
	"io"
	"net"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: relay HOST:PORT")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	for {
		c, err := ln.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "relay:", err)
			os.Exit(1)
		}
		go forward(c.(*net.TCPConn), os.Args[1])
	}
}

// forward copies c to a new connection to addr and back until both directions ended.
func forward(c *net.TCPConn, addr string) {
	defer c.Close()
	d, err := net.Dial("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return
	}
	up := d.(*net.TCPConn)
	defer up.Close()
	sent := make(chan struct{})
	go func() {
		io.Copy(up, c)
		up.CloseWrite()
		close(sent)
	}()
	io.Copy(c, up)
	c.CloseWrite()
	<-sent
}
