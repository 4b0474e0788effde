package main

import (
	"github.com/agentbash/agentbash/pkg/executor"
	"github.com/agentbash/agentbash/pkg/target"
)

// The executors this binary links besides this machine's (docs/architecture.md, "Targets"): each kind of
// target is one package and this registration.
func init() {
	for _, scheme := range target.Schemes {
		executor.Register(scheme, target.Open)
	}
}
