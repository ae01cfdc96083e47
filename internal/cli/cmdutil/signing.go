package cmdutil

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/statewright-go/statewright/store"
)

// The checkpoint signing key lives beside the operator token
// ($XDG_CONFIG_HOME/statewright), which self-protection keeps from the
// agent's tools and the sandbox hides: signing-key holds the Ed25519 seed
// (hex, mode 0600); signing-key.pub the public keys verify trusts, one hex
// key a line, the current one last (older ones stay after a rotation, so
// old checkpoints keep verifying).
const (
	signingKeyFile = "signing-key"
	trustedKeyFile = "signing-key.pub"
)

// SigningKeyPath is where the checkpoint signing key is kept.
func SigningKeyPath() (string, error) {
	p, err := OperatorTokenPath()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(p), signingKeyFile), nil
}

// SigningKey reads the checkpoint signing key; fs.ErrNotExist when there
// is none yet.
func SigningKey() (ed25519.PrivateKey, error) {
	p, err := SigningKeyPath()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	seed, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("%s is not an Ed25519 signing key", p)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// NewSigningKey creates a signing key, replacing the current one (whose
// public key stays trusted), and returns it.
func NewSigningKey() (ed25519.PrivateKey, error) {
	p, err := SigningKeyPath()
	if err != nil {
		return nil, err
	}
	pub, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, err
	}
	tmp := p + ".new"
	if err := os.WriteFile(tmp, []byte(hex.EncodeToString(key.Seed())+"\n"), 0o600); err != nil {
		return nil, err
	}
	if err := addTrustedKey(pub); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	if err := os.Rename(tmp, p); err != nil {
		return nil, err
	}
	return key, nil
}

func addTrustedKey(pub ed25519.PublicKey) error {
	p, err := SigningKeyPath()
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(filepath.Dir(p), trustedKeyFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(f, hex.EncodeToString(pub)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// TrustedKeys returns the public keys checkpoints may be signed with: the
// list kept beside the signing key, the signing key's own, and extra (hex,
// from the command line).
func TrustedKeys(extra []string) ([]ed25519.PublicKey, error) {
	var out []ed25519.PublicKey
	add := func(h, where string) error {
		b, err := hex.DecodeString(strings.TrimSpace(h))
		if err != nil || len(b) != ed25519.PublicKeySize {
			return fmt.Errorf("%s: %q is not an Ed25519 public key (hex)", where, h)
		}
		out = append(out, b)
		return nil
	}
	for _, h := range extra {
		if err := add(h, "--trust"); err != nil {
			return nil, err
		}
	}
	p, err := SigningKeyPath()
	if err != nil {
		return out, nil
	}
	list := filepath.Join(filepath.Dir(p), trustedKeyFile)
	b, err := os.ReadFile(list)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			if err := add(l, list); err != nil {
				return nil, err
			}
		}
	}
	if k, err := SigningKey(); err == nil {
		out = append(out, k.Public().(ed25519.PublicKey))
	}
	return out, nil
}

// AppendCheckpoint appends c as one JSON line to the export file path
// (created 0600): a copy of the checkpoints outside the store, which
// `statewright verify --checkpoints` holds the store to.
func AppendCheckpoint(path string, c store.Checkpoint) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadCheckpoints reads an export written by AppendCheckpoint.
func ReadCheckpoints(r io.Reader) ([]store.Checkpoint, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 256<<20)
	var out []store.Checkpoint
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var c store.Checkpoint
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, c)
	}
	return out, sc.Err()
}

// SignPeriodically signs a checkpoint of st every period with the signing
// key, until ctx is done, and sends each to export (a file, appended as a
// JSON line, or an http(s) URL, POSTed as JSON) when set. See SignAndSend.
func SignPeriodically(ctx context.Context, st store.Store, period time.Duration, export string, log *slog.Logger) {
	SignAndSend(ctx, st, period, CheckpointSender(export), log)
}

// CheckpointSender returns a function that sends a checkpoint to export
// with SendCheckpoint, or nil when export is "".
func CheckpointSender(export string) func(context.Context, store.Checkpoint) error {
	if export == "" {
		return nil
	}
	return func(ctx context.Context, c store.Checkpoint) error {
		if err := SendCheckpoint(ctx, export, c); err != nil {
			return fmt.Errorf("to %s: %w", export, err)
		}
		return nil
	}
}

// SignAndSend signs a checkpoint of st every period with the signing key,
// until ctx is done, and hands each to send when it is set. Without a
// signing key it logs that once and does nothing. A checkpoint the store
// refuses to sign (the log no longer matches the previous one) is logged
// as an error every period until a person looks.
func SignAndSend(ctx context.Context, st store.Store, period time.Duration, send func(context.Context, store.Checkpoint) error, log *slog.Logger) {
	if period <= 0 {
		return
	}
	key, err := SigningKey()
	if err != nil {
		log.Warn("checkpoints off: no signing key (create one with `statewright checkpoint`)", "err", err.Error())
		return
	}
	log.Info("signing checkpoints", "every", period.String(), "key", store.KeyID(key.Public().(ed25519.PublicKey)))
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c, err := st.Checkpoint(ctx, store.CheckpointOptions{Key: key})
		if err != nil {
			log.Error("checkpoint refused", "err", err.Error())
			continue
		}
		log.Info("checkpoint signed", "seq", c.Seq, "chains", c.Chains, "heads", c.HeadsHash)
		if send != nil {
			if err := send(ctx, c); err != nil {
				log.Error("checkpoint export", "err", err.Error())
			}
		}
	}
}

// SendCheckpoint sends c to export: an http(s) URL gets it POSTed as JSON,
// anything else is a file it is appended to (AppendCheckpoint).
func SendCheckpoint(ctx context.Context, export string, c store.Checkpoint) error {
	if !strings.HasPrefix(export, "http://") && !strings.HasPrefix(export, "https://") {
		return AppendCheckpoint(export, c)
	}
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, "POST", export, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the webhook answered %s", resp.Status)
	}
	return nil
}
