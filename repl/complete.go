package repl

import (
	"cmp"
	"os"
	"slices"
	"strings"

	"github.com/ecpi-dev/ecpi/data"
	"github.com/ecpi-dev/ecpi/models"
	"github.com/ecpi-dev/ecpi/train"
)

// Suggestion is one completion candidate: the text that replaces the fragment
// being typed, and one line that says what it is.
type Suggestion struct {
	Text        string
	Description string
}

// WordSeparators end the fragment a suggestion replaces: a space starts a
// word, '=' an option's value, ',' the next item of a list (models=ecp,pi).
const WordSeparators = " =,"

// Complete returns the candidates for the fragment at the end of before, the
// line left of the cursor: command names, then option names (with their help)
// and positional values, then option values. It reads the session (current
// model, settings) but changes nothing, so it is safe on every keystroke.
func Complete(s *Session, before string) []Suggestion {
	if strings.TrimSpace(before) == "" {
		return nil
	}
	// A sentinel marks where the cursor is: it ends the last word unless the
	// cursor sits inside a quote (SplitWords fails) or a comment (it vanishes).
	words, err := SplitWords(before + "\x00")
	if err != nil || len(words) == 0 || !strings.HasSuffix(words[len(words)-1], "\x00") {
		return nil
	}
	current := strings.TrimSuffix(words[len(words)-1], "\x00")
	if strings.Contains(current, "\x00") {
		return nil
	}
	return filterPrefix(candidates(s, words[:len(words)-1], current), fragment(current))
}

// fragment is the part of current after the last separator: what the chosen
// suggestion replaces.
func fragment(current string) string {
	return current[strings.LastIndexAny(current, WordSeparators)+1:]
}

func filterPrefix(all []Suggestion, prefix string) []Suggestion {
	var out []Suggestion
	for _, sg := range all {
		if strings.HasPrefix(sg.Text, prefix) && sg.Text != "" {
			out = append(out, sg)
		}
	}
	return out
}

// candidates lists every suggestion for the word after done, unfiltered.
func candidates(s *Session, done []string, current string) []Suggestion {
	if len(done) == 0 {
		return commandWords()
	}
	if len(done) == 1 {
		if subs := subcommandWords(done[0]); len(subs) > 0 && !strings.Contains(current, "=") {
			if cmd, ok := Lookup(done[0]); ok {
				subs = append(subs, argumentWords(s, cmd, nil, current)...)
			}
			return subs
		}
	}
	cmd, rest := resolve(done)
	if cmd == nil {
		return nil
	}
	if cmd.Name == "help" {
		// help's argument is a command: complete it like the start of a line.
		if len(rest) == 0 {
			return commandWords()
		}
		if len(rest) == 1 {
			return subcommandWords(rest[0])
		}
		return nil
	}
	if strings.HasPrefix(current, "-") {
		return []Suggestion{{"--json", "print one JSON object per result"}, {"--help", "show this command's options"}}
	}
	if name, value, ok := strings.Cut(current, "="); ok {
		return valueWords(s, cmd, done, name, value)
	}
	return argumentWords(s, cmd, rest, current)
}

// resolve finds the command the typed words start with, as Parse does.
func resolve(done []string) (*Command, []string) {
	if len(done) >= 2 {
		if c, ok := Lookup(done[0] + " " + done[1]); ok {
			return c, done[2:]
		}
	}
	if c, ok := Lookup(done[0]); ok {
		return c, done[1:]
	}
	return nil, nil
}

// commandWords are the first words of every command; a word that starts
// several commands ("bench") lists their second words.
func commandWords() []Suggestion {
	var out []Suggestion
	seen := map[string]int{}
	for _, cmd := range Commands() {
		first, second, grouped := strings.Cut(cmd.Name, " ")
		i, dup := seen[first]
		if !dup {
			seen[first] = len(out)
			out = append(out, Suggestion{Text: first})
			i = len(out) - 1
		}
		if grouped {
			out[i].Description = joinNonEmpty(out[i].Description, first+" "+second)
		} else {
			out[i].Description = joinNonEmpty(cmd.Summary, out[i].Description)
		}
	}
	return out
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

func subcommandWords(first string) []Suggestion {
	var out []Suggestion
	for _, cmd := range Commands() {
		if second, ok := strings.CutPrefix(cmd.Name, first+" "); ok {
			out = append(out, Suggestion{Text: second, Description: cmd.Summary})
		}
	}
	return out
}

// argumentWords are the options not typed yet ("name=") and the values of
// the command's positional argument.
func argumentWords(s *Session, cmd *Command, rest []string, current string) []Suggestion {
	typed := map[string]bool{}
	positionals := 0
	for _, w := range rest {
		if name, _, ok := strings.Cut(w, "="); ok && isOption(w) {
			typed[name] = true
		} else if !strings.HasPrefix(w, "--") {
			positionals++
		}
	}
	var out []Suggestion
	if values, ok := positionalValues[cmd.Name]; ok && (positionals == 0 || strings.HasSuffix(cmd.Args, "...")) {
		out = append(out, values(s)...)
	}
	for _, opt := range cmd.AllOptions() {
		if typed[opt.Name] {
			continue
		}
		desc := opt.Help
		if v, ok := s.Get(opt.Name); ok {
			desc += " (now " + v + ")"
		} else if opt.Default != "" {
			desc += " (default " + opt.Default + ")"
		}
		out = append(out, Suggestion{Text: opt.Name + "=", Description: desc})
	}
	return out
}

// positionalValues completes the positional argument of the session commands,
// each with a one-line description.
var positionalValues = map[string]func(s *Session) []Suggestion{
	"model":   func(*Session) []Suggestion { return familySuggestions() },
	"data":    func(*Session) []Suggestion { return datasetSuggestions() },
	"backend": func(*Session) []Suggestion { return plainSuggestions(backendNames(), "backend") },
	"unset": func(s *Session) []Suggestion {
		var out []Suggestion
		for name, value := range s.Settings() {
			out = append(out, Suggestion{Text: name, Description: "now " + value})
		}
		return out
	},
}

func familySuggestions() []Suggestion {
	var out []Suggestion
	for _, f := range models.Families() {
		out = append(out, Suggestion{Text: f.Name, Description: f.Summary})
	}
	return out
}

// datasetSuggestions are every data name train reads (its registry), a
// prepared corpus or image set described by what it stands in for.
func datasetSuggestions() []Suggestion {
	installed := map[string]string{}
	for _, d := range append(data.Corpora(data.Home()), data.ImageSets(data.Home())...) {
		installed[d.Name] = d.StandsFor
		if !d.Prepared {
			installed[d.Name] += " (not prepared)"
		}
	}
	var out []Suggestion
	for _, d := range train.DataInfos() {
		out = append(out, Suggestion{Text: d.Name, Description: cmp.Or(installed[d.Name], d.Summary)})
	}
	return out
}

func plainSuggestions(values []string, description string) []Suggestion {
	out := make([]Suggestion, len(values))
	for i, v := range values {
		out[i] = Suggestion{Text: v, Description: description}
	}
	return out
}

// valueWords are the values of option name; for a comma-separated list, the
// items not in it yet.
func valueWords(s *Session, cmd *Command, done []string, name, value string) []Suggestion {
	opt := cmd.lookup(name)
	if opt == nil {
		return nil
	}
	all := optionValues(s, cmd, opt, done, value)
	listed := strings.Split(value, ",")
	listed = listed[:len(listed)-1]
	var out []Suggestion
	for _, sg := range all {
		if !slices.Contains(listed, sg.Text) {
			out = append(out, sg)
		}
	}
	return out
}

// optionValues lists the values one option can take: a model option's values
// for the family being typed or set, the option's own suggestions, or files for
// options that name a path.
func optionValues(s *Session, cmd *Command, opt *Option, done []string, typed string) []Suggestion {
	if models.IsOption(opt.Name) && cmd.hasOption("model") {
		if opt.Name == "model" {
			return familySuggestions()
		}
		if f, ok := models.FamilyByName(familyOf(s, cmd, done)); ok {
			for _, info := range f.Options() {
				if info.Name == opt.Name && info.Values != nil {
					return plainSuggestions(info.Values, info.Help)
				}
			}
		}
	}
	if values := opt.Suggestions(); values != nil {
		return describeValues(values, opt.Help)
	}
	if namesPath(opt.Name) {
		return pathSuggestions(typed)
	}
	return nil
}

// familyOf is the model family a line is about: typed (model=pi, or `model pi`),
// else the session's, else ecp.
func familyOf(s *Session, cmd *Command, done []string) string {
	for i, w := range done {
		if family, ok := strings.CutPrefix(w, "model="); ok {
			return family
		}
		if cmd.Name == "model" && i == 1 && !isOption(w) {
			return w
		}
	}
	if family, ok := s.Get("model"); ok {
		return family
	}
	return models.DefaultFamily()
}

// describeValues gives model families and datasets their one-line summaries,
// and other values the option's help.
func describeValues(values []string, help string) []Suggestion {
	known := map[string]string{}
	for _, sg := range append(familySuggestions(), datasetSuggestions()...) {
		known[sg.Text] = sg.Description
	}
	out := make([]Suggestion, len(values))
	for i, v := range values {
		desc, ok := known[v]
		if !ok {
			desc = help
		}
		out[i] = Suggestion{Text: v, Description: desc}
	}
	return out
}

// namesPath reports options whose value is a file or folder (checkpoints).
func namesPath(option string) bool {
	return strings.Contains(option, "checkpoint") || strings.HasSuffix(option, "file") ||
		strings.HasSuffix(option, "dir") || option == "out" || option == "from"
}

// pathSuggestions lists the entries of the folder the typed path is in; the
// fragment a path replaces is the whole path, so each suggestion is one too.
func pathSuggestions(typed string) []Suggestion {
	prefix := typed[:strings.LastIndex(typed, "/")+1]
	dir := prefix
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []Suggestion
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, Suggestion{Text: prefix + e.Name() + "/", Description: "folder"})
		} else {
			out = append(out, Suggestion{Text: prefix + e.Name(), Description: "file"})
		}
	}
	return out
}
