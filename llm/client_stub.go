package llm

import (
	"context"
	"iter"

	"github.com/a3s-lab/code-wasm/errkind"
)

type openAI struct{ cfg Config }

type anthropic struct{ cfg Config }

func notYet(yield func(Chunk, error) bool) {
	yield(Chunk{}, &Error{kind: errkind.Unsupported, Message: "llm: provider clients are not built yet"})
}

func (c *openAI) Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error] { return notYet }

func (c *anthropic) Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error] { return notYet }
