package repl

import (
	"fmt"
	"strings"
)

func init() {
	Register(&Command{
		Name:    "help",
		Summary: "list the commands, or show one command's options",
		Args:    "[COMMAND]",
		Run:     runHelp,
	})
}

func runHelp(c *Call) error {
	if len(c.Args) > 0 {
		name := strings.Join(c.Args, " ")
		cmd, ok := Lookup(name)
		if !ok && len(c.Args) == 1 && len(subcommands(name)) > 0 {
			_, err := fmt.Fprint(c.Out, GroupHelp(name))
			return err
		}
		if !ok {
			_, _, err := matchCommand(c.Args)
			if err != nil {
				return err
			}
			return Usagef("no help for %q", name)
		}
		_, err := fmt.Fprint(c.Out, HelpText(cmd))
		return err
	}
	fmt.Fprintln(c.Out, "ecpi — build, train and probe long-context attention (ECP, π-Attention and baselines)")
	fmt.Fprintln(c.Out, "\ncommands (each takes key=value options, --json, --help):")
	width := 0
	for _, cmd := range Commands() {
		width = max(width, len(cmd.Name))
	}
	for _, cmd := range Commands() {
		fmt.Fprintf(c.Out, "  %-*s  %s\n", width, cmd.Name, cmd.Summary)
	}
	return nil
}
