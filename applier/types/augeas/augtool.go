package augeas

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/pippet/pippet/applier/command"
)

// Bounds of one augtool process.
const (
	// maxOutput bounds what one augtool process may print (answers to
	// dump-xml of large trees included); more fails the resource.
	maxOutput = 8 << 20
	// timeout ends an augtool process that takes longer.
	timeout = 5 * time.Minute
)

// script is the input of one augtool process: commands, each followed by
// a marker whose answer ends that command's output.
type script struct {
	nonce string
	lines []string
	cmds  []string // the command of each step, for messages
}

func newScript() *script {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return &script{nonce: hex.EncodeToString(b[:])}
}

func (s *script) marker(i int) string { return fmt.Sprintf("/pippet-%s/%d", s.nonce, i) }

// add appends one augtool command line (its arguments already quoted)
// and returns its step number.
func (s *script) add(line string) int {
	i := len(s.cmds)
	s.lines = append(s.lines, line, "get "+s.marker(i))
	s.cmds = append(s.cmds, line)
	return i
}

// step is one command's answer.
type step struct {
	Out string // what it printed
	Err string // its error lines ("" when it succeeded)
}

// run feeds the script to augtool (argv) and splits its output by step.
func (s *script) run(ctx context.Context, argv []string) ([]step, error) {
	var in strings.Builder
	for _, l := range s.lines {
		in.WriteString(l)
		in.WriteByte('\n')
	}
	// No inputrc: readline must not rebind any key of the commands.
	env := append(os.Environ(), "INPUTRC=/dev/null")
	res, err := command.Run(ctx, &command.Cmd{Argv: argv, Env: env, Stdin: []byte(in.String()), Timeout: timeout, MaxOutput: maxOutput})
	if err != nil {
		return nil, fmt.Errorf("augtool: %w", err)
	}
	if res.Truncated {
		return nil, fmt.Errorf("augtool printed more than %d bytes", maxOutput)
	}
	out := string(res.Output)
	steps := make([]step, len(s.cmds))
	for i := range s.cmds {
		m := s.marker(i) + " (o)\n"
		j := strings.Index(out, m)
		if j < 0 {
			last := strings.TrimSpace(command.LastLines(res.Output, 5))
			return nil, fmt.Errorf("augtool stopped before '%s' (exit %d): %s", s.cmds[i], res.Code, last)
		}
		chunk := out[:j]
		out = out[j+len(m):]
		steps[i] = splitErr(chunk)
	}
	return steps, nil
}

// splitErr separates augtool's error lines ("error: ..." and what
// follows) from a command's answer.
func splitErr(chunk string) step {
	if strings.HasPrefix(chunk, "error: ") {
		return step{Err: strings.TrimSpace(chunk)}
	}
	if i := strings.Index(chunk, "\nerror: "); i >= 0 {
		return step{Out: chunk[:i+1], Err: strings.TrimSpace(chunk[i+1:])}
	}
	return step{Out: chunk}
}

// errText is augtool's error without its generic first line.
func errText(e string) string {
	e = strings.TrimPrefix(e, "error: ")
	e = strings.TrimPrefix(e, "Failed to execute command\n")
	return strings.TrimSpace(e)
}

// quote renders s as one augtool argument that its tokenizer reads back
// as s exactly: in double quotes, a backslash, a double quote, a tab and
// a newline escaped. augtool reads its input through readline, which
// takes other control characters as editing keys (^A would move the rest
// of a value to the start of the command line), so they are refused; and
// it counts brackets even in quoted arguments, so a `]` with no `[`
// before it cannot be passed either.
func quote(s string) (string, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' && c != '\n' || c == 0x7f {
			return "", fmt.Errorf("augtool cannot pass %q: control character %#02x", s, c)
		}
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
			if depth < 0 {
				return "", fmt.Errorf("augtool cannot pass %q: a ']' with no '[' before it", s)
			}
		}
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}

// line renders an augtool command with its arguments quoted.
func line(cmd string, args ...string) (string, error) {
	var b strings.Builder
	b.WriteString(cmd)
	for _, a := range args {
		q, err := quote(a)
		if err != nil {
			return "", err
		}
		b.WriteByte(' ')
		b.WriteString(q)
	}
	return b.String(), nil
}

// node is one matched node of dump-xml's answer.
type node struct {
	Path  string  `xml:"path,attr"`
	Label string  `xml:"label,attr"`
	Value *string `xml:"value"`
}

// nodes reads dump-xml's answer: the nodes the expression matched, in
// order, with their values (nil: none).
func nodes(out string) ([]node, error) {
	var doc struct {
		XMLName xml.Name `xml:"augeas"`
		Nodes   []node   `xml:"node"`
	}
	if err := xml.Unmarshal([]byte(out), &doc); err != nil {
		return nil, fmt.Errorf("reading augtool's dump-xml: %w", err)
	}
	return doc.Nodes, nil
}
