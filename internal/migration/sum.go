package migration

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
)

// errSum is the error of files that do not match their atlas.sum.
var errSum = errors.New("the files do not match atlas.sum: a migration was edited or added by hand; write migrations with `make migration`, or run `go run internal/migration/diff.go -rehash` after a deliberate edit")

// sumLines are the hashes atlas.sum lists for files, one per file: a running
// SHA-256 over every name and content so far (Atlas's HashFile), so that a
// change to one file changes its line and every later one.
func sumLines(list []File) []string {
	h := sha256.New()
	out := make([]string, len(list))
	for i, f := range list {
		h.Write([]byte(f.Name))
		h.Write(f.SQL)
		out[i] = base64.StdEncoding.EncodeToString(h.Sum(nil))
	}
	return out
}

// sumFile is the atlas.sum of files: the sum of every line, then a line per
// file.
func sumFile(list []File) []byte {
	lines := sumLines(list)
	total := sha256.New()
	var body bytes.Buffer
	for i, f := range list {
		total.Write([]byte(f.Name))
		total.Write([]byte(lines[i]))
		fmt.Fprintf(&body, "%s h1:%s\n", f.Name, lines[i])
	}
	return append([]byte("h1:"+base64.StdEncoding.EncodeToString(total.Sum(nil))+"\n"), body.Bytes()...)
}

// checkSum reports whether sum is the atlas.sum of files.
func checkSum(list []File, sum []byte) error {
	if sum == nil {
		return errors.New("no atlas.sum")
	}
	if !bytes.Equal(sumFile(list), sum) {
		return errSum
	}
	return nil
}
