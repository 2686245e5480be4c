package repl

// This file's init fills in the options of `set`: every option any command
// declares. It must run after every Register call, and Go runs a package's
// init functions in file-name order, so this file's name sorts after every
// cmd_*.go file.
func init() {
	set, _ := Lookup("set")
	seen := map[string]bool{}
	for _, cmd := range Commands() {
		for _, opt := range cmd.Options {
			if !seen[opt.Name] {
				seen[opt.Name] = true
				set.Options = append(set.Options, Option{Name: opt.Name, Help: opt.Help, Values: opt.Values})
			}
		}
	}
}
