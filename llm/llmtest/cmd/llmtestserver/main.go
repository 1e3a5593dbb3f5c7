//go:build !js

package main

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/a3s-lab/code-wasm/llm/llmtest"
)

func main() {
	s, err := llmtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "llmtestserver:", err)
		os.Exit(1)
	}
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Println(s.URL)
		select {}
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "LLMTEST_URL="+s.URL)
	err = cmd.Run()
	s.Close()
	if ee, ok := err.(*exec.ExitError); ok {
		os.Exit(ee.ExitCode())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "llmtestserver:", err)
		os.Exit(1)
	}
}
