package cmdutil

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/statewright-go/statewright/store"
	_ "github.com/statewright-go/statewright/store/backends"
	"github.com/statewright-go/statewright/store/storetest"
)

// TestSignPeriodically: serve's signer signs checkpoints with the key kept
// beside the operator token, sends them to a file and to a webhook, and
// they verify with the trusted keys.
func TestSignPeriodically(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "s.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	storetest.Create(t, st, "cc:p")
	if _, _, err := storetest.Decide(ctx, st, "cc:p", "t1"); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	// No key: nothing is signed, and the log says so.
	SignPeriodically(ctx, st, time.Millisecond, "", logger)
	if cps, _ := st.Checkpoints(ctx); len(cps) != 0 || !bytes.Contains(log.Bytes(), []byte("no signing key")) {
		t.Fatalf("signed without a key: %d checkpoints; log %s", len(cps), log.String())
	}
	key, err := NewSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		received []store.Checkpoint
	)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var c store.Checkpoint
		if json.Unmarshal(b, &c) == nil {
			mu.Lock()
			received = append(received, c)
			mu.Unlock()
		}
	}))
	defer hook.Close()
	file := filepath.Join(t.TempDir(), "checkpoints.jsonl")
	for _, export := range []string{file, hook.URL} {
		sctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { SignPeriodically(sctx, st, 20*time.Millisecond, export, logger); close(done) }()
		deadline := time.Now().Add(20 * time.Second) // a liveness bound
		for {
			cps, err := st.Checkpoints(ctx)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			n := len(received)
			mu.Unlock()
			fi, _ := os.Stat(file)
			if (export == file && fi != nil && fi.Size() > 0 && len(cps) >= 1) || (export == hook.URL && n >= 1) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no checkpoint reached %s; log %s", export, log.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		<-done
	}
	fh, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	exported, err := ReadCheckpoints(fh)
	fh.Close()
	if err != nil || len(exported) == 0 {
		t.Fatalf("exported checkpoints: %v, %v", exported, err)
	}
	keys, err := TrustedKeys(nil)
	if err != nil || len(keys) == 0 || !keys[0].Equal(key.Public().(ed25519.PublicKey)) {
		t.Fatalf("trusted keys = %v, %v", keys, err)
	}
	v, err := store.Audit(ctx, st, keys, exported)
	if err != nil || v.Newest == nil {
		t.Fatalf("audit = %+v, %v", v, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if received[0].Verify(key.Public().(ed25519.PublicKey)) != nil {
		t.Error("the webhook's checkpoint does not verify")
	}
}
