package harness

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/blobs"
	"github.com/mecha-agent/mecha/record/transcript"
)

// takesImages says whether the named provider's client sends images:
// Anthropic's Messages API and the Chat Completions wire (OpenAI, and a
// local server, which refuses them itself when its model has no vision).
// The mock and anything else do not.
func takesImages(name string) bool {
	switch name {
	case "anthropic", "openai", "local":
		return true
	}
	return false
}

// imageNames are the names of the image blocks in msgs.
func imageNames(msgs []transcript.Message) []string {
	var names []string
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type == transcript.BlockImage && b.SHA256 != "" {
				names = append(names, textfmt.VisibleLine(b.Name))
			}
		}
	}
	return names
}

// errNoImages is the one line a prompt or a conversation with images gets
// from a provider that does not take them; nothing is sent.
func errNoImages(prov string, names []string) error {
	return fmt.Errorf("%s does not take images (%s): use a provider that does (anthropic, openai, local)", prov, strings.Join(names, ", "))
}

// loadImages returns msgs with the bytes of each image block read back
// from the blob store (checked against its SHA-256), the messages holding
// one copied, not changed in place. An image the store does not hold is
// one error naming it.
func loadImages(store blobs.Store, msgs []transcript.Message) ([]transcript.Message, error) {
	return loadImagesWith(store, store.Get, msgs)
}

// loadImagesWith is loadImages reading each image with get.
func loadImagesWith(store blobs.Store, get func(sum string) ([]byte, error), msgs []transcript.Message) ([]transcript.Message, error) {
	var out []transcript.Message
	for i, m := range msgs {
		for j, b := range m.Content {
			if b.Type != transcript.BlockImage || b.SHA256 == "" || b.Data != nil {
				continue
			}
			data, err := get(b.SHA256)
			if errors.Is(err, blobs.ErrMissing) {
				return nil, fmt.Errorf("image %s (sha256 %s) is not in the blob store %s: it cannot be sent again", textfmt.VisibleLine(b.Name), b.SHA256, store.Dir)
			}
			if err != nil {
				return nil, fmt.Errorf("image %s: %w", textfmt.VisibleLine(b.Name), err)
			}
			if out == nil {
				out = append([]transcript.Message(nil), msgs...)
			}
			if &out[i].Content[0] == &msgs[i].Content[0] {
				out[i].Content = append([]transcript.Block(nil), m.Content...)
			}
			out[i].Content[j].Data = data
		}
	}
	if out == nil {
		return msgs, nil
	}
	return out, nil
}

// imageCache keeps the images a replay has read, by SHA-256: each turn's
// request carries the whole conversation, so without it every turn would
// read and hash every earlier image again.
type imageCache struct {
	mu   sync.Mutex
	seen map[string][]byte
}

func (c *imageCache) get(store blobs.Store, sum string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if data, ok := c.seen[sum]; ok {
		return data, nil
	}
	data, err := store.Get(sum)
	if err != nil {
		return nil, err
	}
	if c.seen == nil {
		c.seen = map[string][]byte{}
	}
	c.seen[sum] = data
	return data, nil
}

// images readies a run's images: refused at once (nothing recorded,
// nothing sent) when the provider takes none; the attached ones kept in
// the blob store (when the run records: a session names them there); the
// history's read back from it.
func (d *Door) images(prov provider.Provider, h *agent.History, attach []transcript.Block) error {
	names := append(imageNames(h.Messages), imageNames([]transcript.Message{{Content: attach}})...)
	if len(names) == 0 {
		return nil
	}
	if !takesImages(prov.Name()) {
		return errNoImages(prov.Name(), names)
	}
	store, err := Blobs(d.world)
	if err != nil {
		return err
	}
	if !d.attach.NoSession {
		for _, b := range attach {
			if _, err := store.Put(b.Data); err != nil {
				return fmt.Errorf("keeping image %s: %w", textfmt.VisibleLine(b.Name), err)
			}
		}
	}
	h.Messages, err = loadImages(store, h.Messages)
	return err
}

// imageProvider sends the images of a recorded conversation (a replay's
// turns) again: each request's image blocks read back from the blob store
// before it goes out; refused, nothing sent, by a provider that takes no
// images.
type imageProvider struct {
	provider.Provider
	store blobs.Store
	cache *imageCache
}

func (p imageProvider) Complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	names := imageNames(req.Messages)
	if len(names) == 0 {
		return p.Provider.Complete(ctx, req)
	}
	if !takesImages(p.Name()) {
		return nil, errNoImages(p.Name(), names)
	}
	msgs, err := loadImagesWith(p.store, func(sum string) ([]byte, error) { return p.cache.get(p.store, sum) }, req.Messages)
	if err != nil {
		return nil, err
	}
	r := *req
	r.Messages = msgs
	return p.Provider.Complete(ctx, &r)
}
