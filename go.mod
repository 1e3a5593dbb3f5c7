module github.com/a3s-lab/code-wasm

go 1.26.0

require (
	github.com/bmatcuk/doublestar/v4 v4.10.4
	github.com/fastschema/qjs v0.0.6
	github.com/hack-pad/hackpadfs v0.2.4
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/tetratelabs/wazero v1.9.0
	go.uber.org/goleak v1.3.0
	golang.org/x/net v0.62.0
	golang.org/x/text v0.43.0
	golang.org/x/tools v0.51.0
)

require github.com/stretchr/testify v1.12.1 // indirect

replace github.com/santhosh-tekuri/jsonschema/v6 => ./third_party/jsonschema
