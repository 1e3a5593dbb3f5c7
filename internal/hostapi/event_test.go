package hostapi

import "github.com/a3s-lab/code-wasm/kernel"

func eventOf(typ string, p map[string]any) kernel.Event {
	return kernel.Event{Version: 1, Type: typ, Payload: p}
}
