// Package doclinks finds doc comments that point at nothing: a doc link naming
// an identifier that its package or the linked package does not declare, and
// a comment naming a file under docs/ that the module does not have. Its test
// runs it over the whole module, so `go test ./...` fails on a stale one.
// The links are those of go/doc/comment:
//
//	[Name] [Type.Method] [Type.Field] [*Type] [pkg] [pkg.Name] [pkg.Type.Method]
//
// They are found by go/doc/comment's own parser and resolved on the parsed
// source (go/parser): a package's top-level names, its types' methods and
// fields (through embedded types of the same package), and interface methods.
// Go's parser keeps a link to nothing as plain text, which is how a stale link
// goes unnoticed; here it is an error, but for the brackets that are not
// meant as links: a lowercase word alone, and one capital letter (a tensor
// shape's dimension, as in "labels [B]").
package doclinks

import (
	"errors"
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Problem is one stale reference in a comment.
type Problem struct {
	Pos  token.Position // file relative to the module root
	What string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.Pos.Filename, p.Pos.Line, p.What) }

// Check reports the stale references in the Go files of every package of the
// module at root (go list ./...), in file order.
func Check(root string) ([]Problem, error) {
	mod, err := loadModule(root)
	if err != nil {
		return nil, err
	}
	var problems []Problem
	for _, pkg := range mod.own {
		found, err := mod.checkPackage(pkg)
		if err != nil {
			return nil, err
		}
		problems = append(problems, found...)
	}
	return problems, nil
}

// listed is one package as go list reports it.
type listed struct {
	ImportPath, Name, Dir string
	files                 []string // every Go file, tests and other platforms' included
}

// module is what links resolve against: the module's packages and every
// package they or their tests import, by import path, and the declarations of
// those read so far.
type module struct {
	root     string
	own      []*listed
	byPath   map[string]*listed
	goroot   string
	declared map[string]*decls
}

func loadModule(root string) (*module, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	m := &module{root: root, byPath: map[string]*listed{}, declared: map[string]*decls{}}
	goroot, err := goCommand(root, "env", "GOROOT")
	if err != nil {
		return nil, err
	}
	m.goroot = strings.TrimSpace(string(goroot))
	if m.own, err = list(root, "./..."); err != nil {
		return nil, err
	}
	deps, err := list(root, "-deps", "-test", "./...")
	if err != nil {
		return nil, err
	}
	for _, p := range append(m.own, deps...) {
		if _, seen := m.byPath[p.ImportPath]; !seen {
			m.byPath[p.ImportPath] = p
		}
	}
	return m, nil
}

// list runs go list with args: the packages, each with its Go files (tests and
// files of other platforms included). Test builds of a package listed already
// ("pkg [pkg.test]") are left out.
func list(root string, args ...string) ([]*listed, error) {
	format := `{{.ImportPath}}	{{.Name}}	{{.Dir}}	{{join .GoFiles " "}} {{join .CgoFiles " "}} {{join .TestGoFiles " "}} {{join .XTestGoFiles " "}} {{join .IgnoredGoFiles " "}}`
	out, err := goCommand(root, append([]string{"list", "-e", "-f", format}, args...)...)
	if err != nil {
		return nil, err
	}
	var pkgs []*listed
	for line := range strings.Lines(string(out)) {
		fields := strings.SplitN(strings.TrimSuffix(line, "\n"), "\t", 4)
		if len(fields) < 4 || strings.Contains(fields[0], " ") {
			continue
		}
		pkgs = append(pkgs, &listed{ImportPath: fields[0], Name: fields[1], Dir: fields[2], files: strings.Fields(fields[3])})
	}
	return pkgs, nil
}

func goCommand(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		err = fmt.Errorf("%w: %s", err, exit.Stderr)
	}
	if err != nil {
		return nil, fmt.Errorf("go %s in %s: %w", strings.Join(args, " "), dir, err)
	}
	return out, nil
}

// decls are the names one package declares.
type decls struct {
	top     map[string]bool
	members map[string]map[string]bool // type name → its methods and fields
	embeds  map[string][]string        // type name → the types of this package it embeds
}

// declsOf reads the declarations of the package at importPath (nil when its
// source cannot be found).
func (m *module) declsOf(importPath string) *decls {
	if d, ok := m.declared[importPath]; ok {
		return d
	}
	dir := filepath.Join(m.goroot, "src", importPath) // a standard package no file here imports
	if p, ok := m.byPath[importPath]; ok {
		dir = p.Dir
	}
	var d *decls
	if files, err := filepath.Glob(filepath.Join(dir, "*.go")); err == nil && len(files) > 0 {
		d = &decls{top: map[string]bool{}, members: map[string]map[string]bool{}, embeds: map[string][]string{}}
		fset := token.NewFileSet()
		for _, path := range files {
			if f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution); err == nil {
				d.add(f)
			}
		}
	}
	m.declared[importPath] = d
	return d
}

func (d *decls) add(f *ast.File) {
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			if decl.Recv == nil {
				d.top[decl.Name.Name] = true
			} else if len(decl.Recv.List) == 1 {
				d.member(typeName(decl.Recv.List[0].Type), decl.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					d.top[spec.Name.Name] = true
					d.addType(spec.Name.Name, spec.Type)
				case *ast.ValueSpec:
					for _, name := range spec.Names {
						d.top[name.Name] = true
					}
				}
			}
		}
	}
}

// addType records the fields and interface methods of type name.
func (d *decls) addType(name string, t ast.Expr) {
	var fields *ast.FieldList
	switch t := t.(type) {
	case *ast.StructType:
		fields = t.Fields
	case *ast.InterfaceType:
		fields = t.Methods
	default:
		return
	}
	for _, field := range fields.List {
		if len(field.Names) == 0 { // embedded: its name is the type's, its members are reachable
			embedded := typeName(field.Type)
			d.member(name, embedded)
			d.embeds[name] = append(d.embeds[name], embedded)
		}
		for _, n := range field.Names {
			d.member(name, n.Name)
		}
	}
}

func (d *decls) member(typ, name string) {
	if d.members[typ] == nil {
		d.members[typ] = map[string]bool{}
	}
	d.members[typ][name] = true
}

// has reports whether recv (a type, or "" for the package) declares name.
func (d *decls) has(recv, name string) bool {
	if recv == "" {
		return d.top[name]
	}
	return d.top[recv] && d.hasMember(recv, name, map[string]bool{})
}

func (d *decls) hasMember(typ, name string, seen map[string]bool) bool {
	if d.members[typ][name] {
		return true
	}
	seen[typ] = true
	for _, e := range d.embeds[typ] {
		if !seen[e] && (!d.top[e] || d.hasMember(e, name, seen)) { // a type of another package: not followed
			return true
		}
	}
	return false
}

// typeName is the name of a receiver or embedded type: T in T, *T, T[P], pkg.T.
func typeName(t ast.Expr) string {
	switch t := t.(type) {
	case *ast.StarExpr:
		return typeName(t.X)
	case *ast.IndexExpr:
		return typeName(t.X)
	case *ast.IndexListExpr:
		return typeName(t.X)
	case *ast.SelectorExpr:
		return t.Sel.Name
	case *ast.Ident:
		return t.Name
	}
	return ""
}

// docsPath is a path under docs/ in a comment, not part of a longer path.
var docsPath = regexp.MustCompile(`(?:^|[^\w./-])(docs/[\w./-]*\w)`)

func (m *module) checkPackage(p *listed) ([]Problem, error) {
	own := m.declsOf(p.ImportPath) // with its tests' names, external test package's included
	fset := token.NewFileSet()
	var problems []Problem
	for _, name := range p.files {
		path := filepath.Join(p.Dir, name)
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(m.root, path)
		report := func(pos token.Pos, format string, args ...any) {
			at := fset.Position(pos)
			at.Filename = rel
			problems = append(problems, Problem{at, fmt.Sprintf(format, args...)})
		}
		for _, group := range f.Comments {
			for _, match := range docsPath.FindAllStringSubmatch(group.Text(), -1) {
				if _, err := os.Stat(filepath.Join(m.root, match[1])); err != nil {
					report(group.Pos(), "%s does not exist", match[1])
				}
			}
		}
		imports := importNames(f, m)
		for _, group := range docComments(f) {
			seen := map[string]bool{} // a stale link written twice in one comment is one problem
			for _, link := range docLinks(group.Text(), imports, p) {
				text := linkText(link, imports)
				if why := m.resolve(link, own, p); why != "" && !seen[text] {
					seen[text] = true
					report(group.Pos(), "doc link [%s]: %s", text, why)
				}
			}
		}
	}
	return problems, nil
}

// unknownPackage marks a link whose package name no import of the file gives.
const unknownPackage = "\x00unknown:"

// docLinks are the doc links of a comment's text: go/doc/comment's parser,
// told that every symbol exists, so that every link-shaped bracket comes back.
func docLinks(text string, imports map[string]string, p *listed) []*comment.DocLink {
	parser := comment.Parser{
		LookupSym: func(recv, name string) bool { return true },
		LookupPackage: func(name string) (string, bool) {
			if path, ok := imports[name]; ok {
				return path, true
			}
			if name == p.Name {
				return p.ImportPath, true
			}
			if _, std := comment.DefaultLookupPackage(name); std {
				return "", false // the parser's own lookup follows
			}
			if token.IsIdentifier(name) {
				return unknownPackage + name, true
			}
			return "", false
		},
	}
	var links []*comment.DocLink
	var walk func([]comment.Text)
	walk = func(texts []comment.Text) {
		for _, t := range texts {
			switch t := t.(type) {
			case *comment.DocLink:
				links = append(links, t)
			case *comment.Link:
				walk(t.Text)
			}
		}
	}
	for _, block := range parser.Parse(text).Content {
		switch b := block.(type) {
		case *comment.Paragraph:
			walk(b.Text)
		case *comment.Heading:
			walk(b.Text)
		case *comment.List:
			for _, item := range b.Items {
				for _, c := range item.Content {
					if para, ok := c.(*comment.Paragraph); ok {
						walk(para.Text)
					}
				}
			}
		}
	}
	return links
}

// resolve says why link names nothing ("" when it names something).
func (m *module) resolve(link *comment.DocLink, own *decls, p *listed) string {
	if !meantAsLink(link) {
		return ""
	}
	if name, ok := strings.CutPrefix(link.ImportPath, unknownPackage); ok {
		return fmt.Sprintf("the file imports no package %s", name)
	}
	d := own
	if link.ImportPath != "" && link.ImportPath != p.ImportPath {
		if d = m.declsOf(link.ImportPath); d == nil {
			return fmt.Sprintf("no source of package %s", link.ImportPath)
		}
		if link.Name == "" { // [pkg]: the package itself
			return ""
		}
	}
	if d.has(link.Recv, link.Name) {
		return ""
	}
	where := "this package"
	if link.ImportPath != "" {
		where = link.ImportPath
	}
	if link.Recv != "" {
		return fmt.Sprintf("%s has no type %s with a method or field %s", where, link.Recv, link.Name)
	}
	return fmt.Sprintf("%s declares no %s", where, link.Name)
}

// meantAsLink tells a link from a bracketed word: a lowercase word alone names
// a package only when it is one (go/doc's own rule), and one capital letter is
// a dimension.
func meantAsLink(link *comment.DocLink) bool {
	if strings.HasPrefix(link.ImportPath, unknownPackage) && link.Name == "" {
		return false
	}
	return link.ImportPath != "" || link.Recv != "" || len(link.Name) > 1
}

// linkText writes a link back as it was typed.
func linkText(link *comment.DocLink, imports map[string]string) string {
	var parts []string
	if path, ok := strings.CutPrefix(link.ImportPath, unknownPackage); ok {
		parts = append(parts, path)
	} else if link.ImportPath != "" {
		name := filepath.Base(link.ImportPath)
		for n, p := range imports {
			if p == link.ImportPath {
				name = n
			}
		}
		parts = append(parts, name)
	}
	for _, s := range []string{link.Recv, link.Name} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ".")
}

// importNames maps the names a file's imports are known by to their paths.
func importNames(f *ast.File, m *module) map[string]string {
	out := map[string]string{}
	for _, spec := range f.Imports {
		path := strings.Trim(spec.Path.Value, `"`)
		name := filepath.Base(path)
		if p, ok := m.byPath[path]; ok && p.Name != "" {
			name = p.Name
		}
		if spec.Name != nil {
			name = spec.Name.Name
		}
		if name != "_" && name != "." {
			out[name] = path
		}
	}
	return out
}

// docComments are the file's doc comments: the package's, and those of its
// declarations, specs, fields and interface methods.
func docComments(f *ast.File) []*ast.CommentGroup {
	var out []*ast.CommentGroup
	ast.Inspect(f, func(n ast.Node) bool {
		var doc *ast.CommentGroup
		switch n := n.(type) {
		case *ast.File:
			doc = n.Doc
		case *ast.FuncDecl:
			doc = n.Doc
		case *ast.GenDecl:
			doc = n.Doc
		case *ast.TypeSpec:
			doc = n.Doc
		case *ast.ValueSpec:
			doc = n.Doc
		case *ast.Field:
			doc = n.Doc
		}
		if doc != nil && !slices.Contains(out, doc) {
			out = append(out, doc)
		}
		return true
	})
	return out
}
