package service

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/acme/itemsvc/ent"
	"github.com/acme/itemsvc/ent/idempotencykey"
	"github.com/acme/itemsvc/internal/apperr"
	"github.com/acme/itemsvc/internal/periodic"
	"github.com/acme/itemsvc/internal/viewer"
)

// Limits of Idempotency-Key (DESIGN §7).
const (
	// MaxIdempotencyKey is the longest key, in characters.
	MaxIdempotencyKey = 255
	// MaxIdempotentRecord is the most a record keeps of its response's
	// body, in stored bytes. A body up to it is kept as it is; a larger one
	// deflated (what makes a GraphQL response large is pages of items,
	// which compress well) in base64. A REST create's response is a few
	// hundred bytes. A mutation whose response does not fit even deflated
	// is refused with its key (VALIDATION_ERROR, nothing changes) rather
	// than done without a record its retry could replay; without the key
	// it is served. No other bound applies to a user's records: one per
	// keyed request, so at most the key's requests over
	// IDEMPOTENCY_KEY_TTL, each at most this (docs/limits.md).
	MaxIdempotentRecord = 16 << 10
	// DefaultIdempotencyTTL is how long a key is kept (IDEMPOTENCY_KEY_TTL).
	DefaultIdempotencyTTL = 24 * time.Hour
	// DefaultIdempotencyTakeover is how long a claim of a request still
	// running is trusted when Options leaves it unset.
	DefaultIdempotencyTakeover = time.Minute
	// IdempotencyRetryAfter is the Retry-After, in seconds, of a request
	// refused because the first with its key still runs.
	IdempotencyRetryAfter = 1
)

// The states of an idempotency record.
const (
	idempotencyRunning = "running"
	idempotencyDone    = "done"
)

// IdempotentRequest names a request sent with an Idempotency-Key.
type IdempotentRequest struct {
	// Key is the client's Idempotency-Key.
	Key string
	// Fingerprint identifies the request (Fingerprint): the same key with
	// another fingerprint is IDEMPOTENCY_KEY_REUSED.
	Fingerprint string
	// DropSecrets records a secret the response showed (showOnce) by
	// leaving out its object member, as REST's answers other than the
	// one that makes a secret do; false records null in its place, as a
	// GraphQL field whose value is not shown.
	DropSecrets bool
}

// IdempotentResponse is a response as recorded for its key and replayed.
type IdempotentResponse struct {
	Status   int
	Body     []byte
	Location string
	// ETag is the response's entity tag (an item's), replayed with it.
	ETag string
	// Failed marks a response that reports a failure although its status
	// is below 400 (GraphQL errors): like a 4xx, it is not recorded.
	Failed bool

	// role is the role of the caller whose request made a replayed record.
	role string
}

// Fingerprint hashes the parts of a request (method, route, canonical body)
// with SHA-256. Each part is length-prefixed, so that no two lists of parts
// hash alike by moving bytes from one part to the next.
func Fingerprint(parts ...[]byte) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// CheckIdempotencyKey refuses a key the API does not take: a key is 1 to
// MaxIdempotencyKey characters of printable ASCII (space to tilde). Other
// bytes are refused here, before the key is used: a database keeps text in
// its own encoding (PostgreSQL refuses bytes that are not UTF-8), and a key
// that is not printable could not be told back to anyone.
func CheckIdempotencyKey(key string) error {
	switch n := len(key); {
	case n == 0:
		return apperr.Validation("Idempotency-Key", "must not be empty")
	case n > MaxIdempotencyKey:
		return apperr.Validation("Idempotency-Key", fmt.Sprintf("must be at most %d characters", MaxIdempotencyKey))
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return apperr.Validation("Idempotency-Key", fmt.Sprintf("must be printable ASCII (space to ~); byte %d is 0x%02x", i, key[i]))
		}
	}
	return nil
}

// ambientTx is the transaction of a request run by Idempotent: withTx joins
// it instead of opening its own, so that the change and its idempotency
// record commit together.
type ambientTx struct {
	tx *ent.Tx
	// secrets are the secrets the change made and its response shows
	// once (showOnce): the record keeps null in their place.
	secrets []string
}

// showOnce notes a secret that the response of the request under ctx
// shows, and that no later answer may show again (a new API key, a
// webhook's signing secret): when the request runs under Idempotent, its
// record keeps null where the response has the secret, so that a retry
// answers without it.
func showOnce(ctx context.Context, secret string) {
	if a, ok := ctx.Value(ambientTxKey{}).(*ambientTx); ok {
		a.secrets = append(a.secrets, secret)
	}
}

type ambientTxKey struct{}

// Idempotent runs a change at most once per caller and key, and answers
// every request with the same key with the first one's response (DESIGN §7).
//
// The key is first claimed (state running) in a statement of its own, which
// commits at once: a concurrent request with the key meets it, and gets
// IDEMPOTENCY_KEY_IN_USE while it runs, IDEMPOTENCY_KEY_REUSED if it is a
// different request, or the recorded response (replayed true) once it is
// done. run then works in one transaction (every withTx under its context
// joins it), and the record is marked done with run's response in that same
// transaction: a crash leaves both the change and its record, or neither.
//
// A replay is served only to a caller who could make the request now: a key
// with the write scope (PERMISSION_DENIED, reason read-only key, as the
// request itself), and the role the first request had (an admin's record
// to an admin only). The transports run their own checks of a replay too
// (authentication, rate limit, scopes), as of any request.
//
// The record never keeps a secret the response showed (showOnce): a retry
// gets null in its place. Nor more than MaxIdempotentRecord bytes.
//
// Only a success is recorded. When run fails or answers 400 or more, its
// transaction rolls back and the claim is released, so the client may fix
// the request and send it again with the same key. A claim left running by
// a server that died is taken over by a retry once it is older than
// Options.IdempotencyTakeover, which outlives any request that could still
// commit (REQUEST_TIMEOUT and a margin).
func (s *Service) Idempotent(ctx context.Context, req IdempotentRequest, run func(ctx context.Context) (IdempotentResponse, error)) (resp IdempotentResponse, replayed bool, err error) {
	v, err := requireViewer(ctx)
	if err != nil {
		return resp, false, err
	}
	if err := CheckIdempotencyKey(req.Key); err != nil {
		return resp, false, err
	}
	rec, token, replay, err := s.claimKey(ctx, v.UserID, req)
	if err != nil {
		return resp, false, err
	}
	if replay != nil {
		if err := replayAllowed(ctx, v, replay.role); err != nil {
			return IdempotentResponse{}, false, err
		}
		return *replay, true, nil
	}
	tx, err := s.db.Tx(ctx)
	if err != nil {
		s.releaseKey(ctx, rec.ID, token)
		return resp, false, fmt.Errorf("begin: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = tx.Rollback()
		}
		if p := recover(); p != nil {
			// A panic (rendered as a 500 further up) made no change.
			s.releaseKey(ctx, rec.ID, token)
			panic(p)
		}
	}()
	amb := &ambientTx{tx: tx}
	resp, err = run(context.WithValue(ctx, ambientTxKey{}, amb))
	if err != nil || resp.Failed || resp.Status >= 400 {
		_ = tx.Rollback()
		s.releaseKey(ctx, rec.ID, token)
		return resp, false, err
	}
	stored, ok := packBody(withoutSecrets(resp.Body, amb.secrets, req.DropSecrets))
	if !ok {
		_ = tx.Rollback()
		s.releaseKey(ctx, rec.ID, token)
		return IdempotentResponse{}, false, apperr.Validation("Idempotency-Key",
			fmt.Sprintf("the response (%d bytes) is larger than the %d bytes kept for a retry, even compressed; nothing was changed: ask for fewer fields, or send the request without the key", len(resp.Body), MaxIdempotentRecord))
	}
	n, err := tx.IdempotencyKey.Update().
		Where(idempotencykey.ID(rec.ID), idempotencykey.State(idempotencyRunning), idempotencykey.Claim(token)).
		SetState(idempotencyDone).
		SetRole(string(v.Role)).
		SetStatus(resp.Status).
		SetBody(stored).
		SetLocation(resp.Location).
		SetEtag(resp.ETag).
		Save(system(ctx))
	if err != nil {
		_ = tx.Rollback()
		s.releaseKey(ctx, rec.ID, token)
		return IdempotentResponse{}, false, fmt.Errorf("record idempotency key: %w", err)
	}
	if n == 0 {
		// Taken over: this request outlived its claim, and another now
		// holds the key; its change, not this one, is the one to keep.
		return IdempotentResponse{}, false, apperr.IdempotencyKeyInUse(IdempotencyRetryAfter)
	}
	committed = true
	if err := tx.Commit(); err != nil {
		// Whether it committed is unknown (a connection lost at commit):
		// the claim stays, and a retry after the takeover age finds the
		// record done, or takes the key over and makes the change.
		return IdempotentResponse{}, false, fmt.Errorf("commit: %w", err)
	}
	if s.opts.OnCommit != nil {
		s.opts.OnCommit()
	}
	return resp, false, nil
}

// storedBytes sums the lengths of the stored bodies of q's records.
func storedBytes(ctx context.Context, q *ent.IdempotencyKeyQuery) (int, error) {
	var sums []struct {
		Sum *int64 `json:"sum"`
	}
	err := q.Aggregate(func(sel *sql.Selector) string {
		return sql.As("SUM(LENGTH("+sel.C(idempotencykey.FieldBody)+"))", "sum")
	}).Scan(ctx, &sums)
	if err != nil {
		return 0, fmt.Errorf("sum stored replay bytes: %w", err)
	}
	if len(sums) == 0 || sums[0].Sum == nil {
		return 0, nil
	}
	return int(*sums[0].Sum), nil
}

// StoredReplayBytes is what every user's unexpired Idempotency-Key records
// keep for replays (the metric itemsvc_idempotency_stored_bytes).
func (s *Service) StoredReplayBytes(ctx context.Context) (int, error) {
	return storedBytes(system(ctx), s.db.IdempotencyKey.Query().Where(idempotencykey.ExpiresAtGT(time.Now())))
}

// claimKey claims the key for this request, or returns the recorded
// response to replay, or the refusal of the key's state.
func (s *Service) claimKey(ctx context.Context, userID string, req IdempotentRequest) (*ent.IdempotencyKey, string, *IdempotentResponse, error) {
	sys := system(ctx)
	for range 3 {
		now := time.Now()
		token := rand.Text()
		rec, err := s.insertClaim(sys, userID, req, token, now)
		if err == nil {
			return rec, token, nil, nil
		}
		if !ent.IsConstraintError(err) {
			return nil, "", nil, fmt.Errorf("claim idempotency key: %w", err)
		}
		cur, err := s.db.IdempotencyKey.Query().
			Where(idempotencykey.UserID(userID), idempotencykey.Key(req.Key)).
			Only(sys)
		if ent.IsNotFound(err) {
			continue // pruned or released since: claim it again
		}
		if err != nil {
			return nil, "", nil, fmt.Errorf("read idempotency key: %w", err)
		}
		if !cur.ExpiresAt.After(now) {
			// Expired but not yet pruned: the key is free again.
			if _, err := s.db.IdempotencyKey.Delete().
				Where(idempotencykey.ID(cur.ID), idempotencykey.ExpiresAtLTE(now)).
				Exec(sys); err != nil {
				return nil, "", nil, fmt.Errorf("delete expired idempotency key: %w", err)
			}
			continue
		}
		if cur.Fingerprint != req.Fingerprint {
			return nil, "", nil, apperr.IdempotencyKeyReused()
		}
		if cur.State == idempotencyDone {
			body, err := unpackBody(cur.Body)
			if err != nil {
				return nil, "", nil, err
			}
			return nil, "", &IdempotentResponse{Status: cur.Status, Body: body, Location: cur.Location, ETag: cur.Etag, role: cur.Role}, nil
		}
		if now.Sub(cur.ClaimedAt) < s.idempotencyTakeover() {
			return nil, "", nil, apperr.IdempotencyKeyInUse(IdempotencyRetryAfter)
		}
		// A claim its request can no longer complete (the server died):
		// take it over, unless another retry just did.
		n, err := s.db.IdempotencyKey.Update().
			Where(idempotencykey.ID(cur.ID), idempotencykey.State(idempotencyRunning), idempotencykey.Claim(cur.Claim)).
			SetClaim(token).
			SetClaimedAt(now).
			Save(sys)
		if err != nil {
			return nil, "", nil, fmt.Errorf("take over idempotency key: %w", err)
		}
		if n == 0 {
			return nil, "", nil, apperr.IdempotencyKeyInUse(IdempotencyRetryAfter)
		}
		return cur, token, nil, nil
	}
	return nil, "", nil, apperr.IdempotencyKeyInUse(IdempotencyRetryAfter)
}

// insertClaim writes a new claim of the key in a transaction of its own,
// committed before the change runs, so that a concurrent request with the
// same key finds it. A transaction rather than a bare insert: the insert
// returns its id (INSERT … RETURNING, a query to the driver), and on SQLite
// only transactions and statements queue at the write gate; a bare one
// would wait in SQLite's busy handler holding a pooled connection, and
// enough of them would starve the request that holds the gate.
func (s *Service) insertClaim(ctx context.Context, userID string, req IdempotentRequest, token string, now time.Time) (*ent.IdempotencyKey, error) {
	tx, err := s.db.Tx(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin claim: %w", err)
	}
	rec, err := tx.IdempotencyKey.Create().
		SetUserID(userID).
		SetKey(req.Key).
		SetFingerprint(req.Fingerprint).
		SetState(idempotencyRunning).
		SetClaim(token).
		SetCreatedAt(now).
		SetClaimedAt(now).
		SetExpiresAt(now.Add(s.idempotencyTTL())).
		Save(ctx)
	if err != nil {
		_ = tx.Rollback()
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit claim: %w", err)
	}
	return rec.Unwrap(), nil
}

// releaseKey deletes a claim whose request made no change, so that the key
// can be used again. It runs even when the request's context has ended (a
// timeout is such a failure); if it cannot, the claim expires by takeover.
func (s *Service) releaseKey(ctx context.Context, id int, token string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := s.db.IdempotencyKey.Delete().
		Where(idempotencykey.ID(id), idempotencykey.State(idempotencyRunning), idempotencykey.Claim(token)).
		Exec(system(ctx)); err != nil {
		s.log.WarnContext(ctx, "release idempotency key", "err", err)
	}
}

// replayAllowed refuses a replay to a caller weaker than the one whose
// request made the record: a read-only key (as the request itself would
// be), or a user no longer admin replaying an admin's request (whatever it
// needed of the role: the record does not say).
func replayAllowed(ctx context.Context, v viewer.Viewer, role string) error {
	if err := RequireWrite(ctx); err != nil {
		return err
	}
	if role == string(viewer.RoleAdmin) && !v.Admin() {
		e := apperr.PermissionDenied("this Idempotency-Key's request was made by an admin; only an admin may have its response again")
		e.Details["reason"] = ReasonAdminReplay
		return e
	}
	return nil
}

// withoutSecrets is body with each JSON string that is one of secrets
// replaced by null, or with the object member it is the value of left out
// (drop). A secret is made of characters JSON writes as they are (letters,
// digits, '_', '-', '.', '/', '+'), so its string is found as "secret" in the body,
// whatever the field's name or alias, and however deep.
func withoutSecrets(body []byte, secrets []string, drop bool) []byte {
	for _, sec := range secrets {
		if sec == "" {
			continue
		}
		quoted := regexp.QuoteMeta(`"` + sec + `"`)
		if drop {
			// A member after another takes its comma with it; a first
			// member, the comma after it.
			body = regexp.MustCompile(`,\s*"(?:[^"\\]|\\.)*"\s*:\s*`+quoted+`|"(?:[^"\\]|\\.)*"\s*:\s*`+quoted+`\s*,?`).ReplaceAll(body, nil)
		}
		body = bytes.ReplaceAll(body, []byte(`"`+sec+`"`), []byte("null"))
	}
	return body
}

// deflated marks a stored body that packBody deflated: what follows is its
// base64. A body kept as it is is JSON, which starts with '{'.
const deflated = "deflate:"

// packBody is body as a record keeps it: as it is when it fits in
// MaxIdempotentRecord, else deflated in base64 when that fits; ok is false
// when neither does.
func packBody(body []byte) (stored string, ok bool) {
	if len(body) <= MaxIdempotentRecord {
		return string(body), true
	}
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, flate.BestCompression)
	_, _ = w.Write(body)
	_ = w.Close()
	if len(deflated)+base64.StdEncoding.EncodedLen(b.Len()) > MaxIdempotentRecord {
		return "", false
	}
	return deflated + base64.StdEncoding.EncodeToString(b.Bytes()), true
}

// unpackBody is the body packBody stored.
func unpackBody(stored string) ([]byte, error) {
	enc, ok := strings.CutPrefix(stored, deflated)
	if !ok {
		return []byte(stored), nil
	}
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("open recorded response: %w", err)
	}
	body, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(raw)), maxUnpacked))
	if err != nil {
		return nil, fmt.Errorf("open recorded response: %w", err)
	}
	return body, nil
}

// maxUnpacked bounds what a deflated record opens to: more than any body
// the transports write for a mutation (REQUEST_BODY and response bounds).
const maxUnpacked = 16 << 20

func (s *Service) idempotencyTTL() time.Duration {
	if s.opts.IdempotencyTTL > 0 {
		return s.opts.IdempotencyTTL
	}
	return DefaultIdempotencyTTL
}

func (s *Service) idempotencyTakeover() time.Duration {
	if s.opts.IdempotencyTakeover > 0 {
		return s.opts.IdempotencyTakeover
	}
	return DefaultIdempotencyTakeover
}

// PruneIdempotencyKeys deletes the records past their lifetime
// (IDEMPOTENCY_KEY_TTL) and returns how many. Every replica may run it: the
// delete is idempotent.
func (s *Service) PruneIdempotencyKeys(ctx context.Context) (int, error) {
	n, err := s.db.IdempotencyKey.Delete().
		Where(idempotencykey.ExpiresAtLTE(time.Now())).
		Exec(system(ctx))
	if err != nil {
		return 0, fmt.Errorf("prune idempotency keys: %w", err)
	}
	return n, nil
}

// RunIdempotencyPruner prunes expired idempotency records every interval
// until ctx ends; the first pass runs at once.
func (s *Service) RunIdempotencyPruner(ctx context.Context, every time.Duration) {
	periodic.Run(ctx, every, func(ctx context.Context) {
		n, err := s.PruneIdempotencyKeys(ctx)
		switch {
		case err != nil && !errors.Is(ctx.Err(), context.Canceled):
			s.log.WarnContext(ctx, "prune idempotency keys", "err", err)
		case n > 0:
			s.log.InfoContext(ctx, "pruned idempotency keys", "count", n)
		}
	})
}
