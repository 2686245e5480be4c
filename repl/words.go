package repl

// Words: a line split like a shell splits it, and the edit distance behind
// every "did you mean".

import "strings"

// SplitWords splits a line like a shell: spaces separate words, double or
// single quotes group them (so `sample "The "` keeps its space), backslash
// escapes inside double quotes.
func SplitWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case ch == '"' || ch == '\'':
			quote := ch
			inWord = true
			closed := false
			for i++; i < len(line); i++ {
				if line[i] == quote {
					closed = true
					break
				}
				if quote == '"' && line[i] == '\\' && i+1 < len(line) {
					i++
					cur.WriteByte(unescape(line[i]))
					continue
				}
				cur.WriteByte(line[i])
			}
			if !closed {
				return nil, Usagef("unterminated %c quote in %q", quote, line)
			}
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case ch == '#' && !inWord:
			i = len(line) // a comment runs to the end of the line
		default:
			inWord = true
			cur.WriteByte(ch)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func unescape(ch byte) byte {
	switch ch {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	}
	return ch
}

// Nearest returns the candidate closest to word by edit distance, or "" when
// nothing is close enough to be a plausible typo.
func Nearest(word string, candidates []string) string {
	best, bestDist := "", len(word)/2+2
	for _, c := range candidates {
		if d := editDistance(word, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
