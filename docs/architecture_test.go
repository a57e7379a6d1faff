package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// repoPackages maps each package name of the repository to the names its
// non-test files declare at top level (methods as Type.Method too), and
// lists the directories holding Go packages.
func repoPackages(t *testing.T, root string) (names map[string]map[string]bool, dirs map[string]bool) {
	t.Helper()
	names, dirs = map[string]map[string]bool{}, map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "bin" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		dirs[filepath.ToSlash(rel)] = true
		decl := names[f.Name.Name]
		if decl == nil {
			decl = map[string]bool{}
			names[f.Name.Name] = decl
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				decl[d.Name.Name] = true
				if d.Recv != nil && len(d.Recv.List) == 1 {
					if recv := recvName(d.Recv.List[0].Type); recv != "" {
						decl[recv+"."+d.Name.Name] = true
					}
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						decl[s.Name.Name] = true
						for _, m := range members(s.Type) {
							decl[s.Name.Name+"."+m] = true
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							decl[n.Name] = true
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names, dirs
}

// members are a struct's fields (embedded ones by their type's name) or
// an interface's methods.
func members(e ast.Expr) []string {
	var fields *ast.FieldList
	switch e := e.(type) {
	case *ast.StructType:
		fields = e.Fields
	case *ast.InterfaceType:
		fields = e.Methods
	default:
		return nil
	}
	var out []string
	for _, f := range fields.List {
		for _, n := range f.Names {
			out = append(out, n.Name)
		}
		if len(f.Names) == 0 {
			if n := recvName(f.Type); n != "" {
				out = append(out, n)
			}
		}
	}
	return out
}

func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

var (
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	// pkgPath is a repository-relative package path as the document
	// writes it: lower-case elements joined by slashes.
	pkgPath = regexp.MustCompile(`^[a-z][a-z0-9]*(/[a-z][a-z0-9_]*)+/?$`)
	// qualified is pkg.Name or pkg.Type.Method, optionally called: Name(…).
	qualified = regexp.MustCompile(`^([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*(?:\.[A-Z][A-Za-z0-9_]*)?)(?:\(.*\))?$`)
)

// Every package docs/architecture.md names exists, and every
// package-qualified name it writes is declared there: a renamed, moved or
// removed package or function fails here until the text follows.
func TestArchitectureNamesWhatExists(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	names, dirs := repoPackages(t, root)
	top := map[string]bool{}
	for d := range dirs {
		top[strings.SplitN(d, "/", 2)[0]] = true
	}
	var missing []string
	checked := 0
	for _, m := range codeSpan.FindAllStringSubmatch(string(text), -1) {
		span := m[1]
		for _, word := range strings.Fields(span) {
			word = strings.TrimRight(word, ",;:")
			switch {
			case pkgPath.MatchString(word) && top[strings.SplitN(word, "/", 2)[0]]:
				checked++
				if p := strings.TrimSuffix(word, "/"); !dirs[p] && !isDir(filepath.Join(root, p)) {
					missing = append(missing, "package "+word)
				}
			case qualified.MatchString(word):
				q := qualified.FindStringSubmatch(word)
				decl, known := names[q[1]]
				if !known {
					continue // not a package of this repository (os.Getenv, a Mesos call)
				}
				checked++
				if !decl[q[2]] {
					missing = append(missing, word)
				}
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("docs/architecture.md names %d things the code does not have:\n%s", len(missing), strings.Join(missing, "\n"))
	}
	if checked < 50 {
		t.Errorf("only %d names checked: the document's form changed and this test reads too little of it", checked)
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
