package main

import (
	"bytes"
	"os"
	"testing"
)

// TestRoundTrip: the skeleton reads and writes back byte for byte, so what
// the generator does not generate stays exactly as written.
func TestRoundTrip(t *testing.T) {
	data, err := os.ReadFile("../skeleton.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := parse(data)
	if err != nil {
		t.Fatal(err)
	}
	out, err := encode(v)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, data) {
		t.Error("skeleton.json does not read and write back as it is: format it as the generator writes (two-space indent, no HTML escapes)")
	}
}
