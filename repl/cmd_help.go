package repl

import (
	"fmt"
	"strings"
)

// Help: the `help` command, and the --help text of a command or a group of
// commands, which the parser's --help and `help` print alike.

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

// helpText is what `CMD --help` and `GROUP --help` print. It lives with the
// help texts rather than with Invocation so that the parser does not depend on
// help, while help uses the parser (matchCommand) for its own errors.
func (inv *Invocation) helpText() string {
	if inv.Command == nil {
		return GroupHelp(inv.Group)
	}
	return HelpText(inv.Command)
}

// HelpText is the --help of one command.
func HelpText(c *Command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s — %s\n\nusage: ecpi %s", c.Name, c.Summary, c.Name)
	if c.Args != "" {
		fmt.Fprintf(&b, " %s", c.Args)
	}
	opts := c.AllOptions()
	if len(opts) > 0 {
		b.WriteString(" [key=value ...]")
	}
	b.WriteString(" [--json]\n")
	if c.Details != "" {
		fmt.Fprintf(&b, "\n%s\n", strings.TrimRight(c.Details, "\n"))
	}
	if len(opts) > 0 {
		b.WriteString("\noptions:\n")
		width := 0
		for _, o := range opts {
			width = max(width, len(o.Name)+len(o.Default)+1)
		}
		for _, o := range opts {
			fmt.Fprintf(&b, "  %-*s  %s\n", width, o.Name+"="+o.Default, o.Described())
		}
	}
	return b.String()
}

// GroupHelp is the --help of a group of commands ("bench", "probe"): its
// subcommands and what each does.
func GroupHelp(group string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: ecpi %s SUBCOMMAND [key=value ...] [--json]\n\nsubcommands:\n", group)
	names := subcommands(group)
	width := 0
	for _, name := range names {
		width = max(width, len(name))
	}
	for _, name := range names {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, name, registry[group+" "+name].Summary)
	}
	fmt.Fprintf(&b, "\n`ecpi %s SUBCOMMAND --help` shows a subcommand's options.\n", group)
	return b.String()
}
