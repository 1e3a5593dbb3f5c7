//go:build !js

package qjsengine

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite npm/src/ptc-prelude.mjs from prelude.js")

// npmPrelude is where the JavaScript hosts' engine (npm/src/ptc-quickjs.mjs)
// imports the prelude from.
const npmPrelude = "../../npm/src/ptc-prelude.mjs"

// npmPreludeModule is prelude.js as the ES module the npm engine imports.
func npmPreludeModule() string {
	return "// Code generated from ptc/qjsengine/prelude.js by \"go generate ./ptc/qjsengine\"; DO NOT EDIT.\n\n" +
		"// PRELUDE is the source of the function evaluated in a program's realm\n" +
		"// before its script (see prelude.js: one source for every engine).\n" +
		"export const PRELUDE = String.raw`" + prelude + "`;\n"
}

// TestNPMPreludeIsGenerated: every engine runs the same prelude. The npm
// copy is generated from prelude.js (go generate, which runs this test with
// -update); the test fails when they differ.
func TestNPMPreludeIsGenerated(t *testing.T) {
	if strings.ContainsAny(prelude, "`") || strings.Contains(prelude, "${") {
		t.Fatal("prelude.js holds a backtick or ${: it cannot be a String.raw template")
	}
	want := npmPreludeModule()
	if *update {
		if err := os.WriteFile(npmPrelude, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(npmPrelude)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s differs from prelude.js: run go generate ./ptc/qjsengine", npmPrelude)
	}
}
