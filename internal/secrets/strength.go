package secrets

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"strings"
)

// MinBits is the least estimated strength of a server secret (SECRET_KEY,
// JWT_SECRET): anyone who guesses it signs tokens as any user, admins
// included.
const MinBits = 128

// HowTo says how to make a secret that passes Check; every refusal ends
// with it.
const HowTo = "openssl rand -hex 32 makes one"

// Placeholders are the values the project itself ships where a secret goes
// (the Kubernetes example's Secret, the docs' examples): known to everyone
// who read them, whatever their length.
var Placeholders = []string{
	"replace-with-the-output-of-openssl-rand-hex-32",
}

// ErrPlaceholder is Check's refusal of one of Placeholders.
var ErrPlaceholder = errors.New("is the placeholder the project ships, known to anyone who read it: set a random value (" + HowTo + ")")

// Check refuses a server secret that can be guessed: shorter than
// MinKeyLen bytes, one of Placeholders, or estimated (Strength) below
// MinBits. Its message never repeats the secret and always says how to make
// a good one.
func Check(secret string) error {
	if len(secret) < MinKeyLen {
		return fmt.Errorf("want at least %d bytes, got %d (%s)", MinKeyLen, len(secret), HowTo)
	}
	for _, p := range Placeholders {
		if strings.EqualFold(strings.TrimSpace(secret), p) {
			return ErrPlaceholder
		}
	}
	if bits := Strength(secret); bits < MinBits {
		return fmt.Errorf("too easy to guess: an estimated %.0f bits, want %d (runs, sequences, repeats and words count for little; %s)", bits, MinBits, HowTo)
	}
	return nil
}

//go:embed words.txt
var wordList string

// words is the list's words: its lines after the comments at its top,
// sorted byte-wise, one a line (TestWordListSorted). isWord searches them
// where they lie: a map of them was heap that every start allocated, for a
// check the server makes once (docs/development.md, "Idle footprint").
var words = func() string {
	w := wordList
	for strings.HasPrefix(w, "#") || strings.HasPrefix(w, "\n") {
		_, w, _ = strings.Cut(w, "\n")
	}
	return w
}()

// wordBits is what guessing one word of the list costs; longestWord is the
// length of its longest.
var wordBits, longestWord = func() (float64, int) {
	n, longest := 0, 0
	for line := range strings.Lines(words) {
		n++
		longest = max(longest, len(strings.TrimSuffix(line, "\n")))
	}
	return math.Log2(float64(n)), longest
}()

// isWord reports whether w is a word of the list, by binary search of its
// sorted lines.
func isWord(w string) bool {
	list := words
	for list != "" {
		start := strings.LastIndexByte(list[:len(list)/2], '\n') + 1
		line, rest, _ := strings.Cut(list[start:], "\n")
		switch {
		case w == line:
			return true
		case w < line:
			list = list[:start]
		default:
			list = rest
		}
	}
	return false
}

// Strength is a crude estimate, in bits, of how hard s is to guess: the
// cheapest description of s as a sequence of parts, each costing what
// guessing it costs. A character costs log2 of the alphabet s draws from
// (16 for hex digits, 95 for printable ASCII in all classes); a run or a
// sequence (aaaa, 1234, fedc) costs its first character, its step and its
// length; a repeat of an earlier part costs where it was and how long; a
// word of the list (words.txt, any case) costs log2 of the list's length,
// a separator after it 2 bits. Random bytes in hex or base64 score near
// their true entropy (openssl rand -hex 32: about 256); a placeholder, a
// phrase or a pattern scores far below.
func Strength(s string) float64 {
	// The estimate costs n³ steps at worst: a longer secret is judged by
	// its first maxJudged bytes, which hold enough to pass.
	s = s[:min(len(s), maxJudged)]
	n := len(s)
	char := math.Log2(float64(alphabet(s)))
	lower := strings.ToLower(s)
	// best[i] is the cheapest description of s[i:].
	best := make([]float64, n+1)
	for i := n - 1; i >= 0; i-- {
		b := char + best[i+1]
		// A run or a sequence: a constant step of -1, 0 or +1.
		if i+2 < n {
			step := int(s[i+1]) - int(s[i])
			if step >= -1 && step <= 1 {
				j := i + 1
				for j+1 < n && int(s[j+1])-int(s[j]) == step {
					j++
				}
				for end := i + 3; end <= j+1; end++ {
					b = min(b, char+math.Log2(3)+math.Log2(float64(end-i))+best[end])
				}
			}
		}
		// A repeat of what came before (the longest, from any earlier start).
		if l := longestRepeat(s, i); l >= 3 {
			for end := i + 3; end <= i+l; end++ {
				b = min(b, math.Log2(float64(i))+math.Log2(float64(end-i))+best[end])
			}
		}
		// A word, alone or with a separator after it.
		for l := 2; l <= longestWord && i+l <= n; l++ {
			if !isWord(lower[i : i+l]) {
				continue
			}
			b = min(b, wordBits+best[i+l])
			if i+l < n && strings.IndexByte("-_. ", s[i+l]) >= 0 {
				b = min(b, wordBits+2+best[i+l+1])
			}
		}
		best[i] = b
	}
	return best[0]
}

// maxJudged is how much of a secret Strength reads.
const maxJudged = 256

// longestRepeat is the length of the longest prefix of s[i:] that also
// starts at an earlier position (it may run into s[i:], as in abcabcabc).
func longestRepeat(s string, i int) int {
	longest := 0
	for j := 0; j < i; j++ {
		l := 0
		for i+l < len(s) && s[j+l] == s[i+l] {
			l++
		}
		longest = max(longest, l)
	}
	return longest
}

// alphabet is the size of the alphabet s seems drawn from: the classes of
// the characters it holds (hex digits of one case count as 16).
func alphabet(s string) int {
	var digit, lower, upper, hexLower, hexUpper, other, high bool
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			digit = true
		case 'a' <= c && c <= 'f':
			hexLower = true
		case 'A' <= c && c <= 'F':
			hexUpper = true
		case 'a' <= c && c <= 'z':
			lower = true
		case 'A' <= c && c <= 'Z':
			upper = true
		case c >= 0x80:
			high = true
		default:
			other = true
		}
	}
	if !lower && !upper && !other && !high && !(hexLower && hexUpper) {
		if hexLower || hexUpper {
			return 16
		}
		return 10
	}
	size := 0
	for _, c := range []struct {
		in   bool
		size int
	}{{digit, 10}, {lower || hexLower, 26}, {upper || hexUpper, 26}, {other, 33}, {high, 128}} {
		if c.in {
			size += c.size
		}
	}
	return size
}
