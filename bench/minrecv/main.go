// Command minrecv is the least a receiver process can do for the e2e
// harness's "file unchanged" lines: read a line, find the title and the
// content, lstat, open, read, close, compare, answer. It is not a receiver
// (it understands only those lines); it measures what the operating system
// and a pipe cost a separate process, to set beside the harness's
// in-process floor and the real receiver (BENCHMARKS.md):
//
//	go build -o /tmp/minrecv ./bench/minrecv
//	go run ./bench/e2e -receiver /tmp/minrecv -n 10000 -runs 5 -only 'file unchanged'
//
// With MINRECV_FSTAT=1 in its environment it also fstats the open file,
// as the receiver does to make sure it read what it lstat'ed (a path
// swapped between the two): the same six system calls as the receiver.
package main

import (
	"bufio"
	"bytes"
	"os"
	"syscall"
)

func main() {
	os.Stdout.WriteString(`{"ready":true,"protocol":1,"version":"0.1.0"}` + "\n")
	r := bufio.NewReaderSize(os.Stdin, 64<<10)
	var buf [256]byte
	out := make([]byte, 0, 256)
	fstat := os.Getenv("MINRECV_FSTAT") == "1"
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		i := bytes.Index(line, []byte(`"title":"`)) + len(`"title":"`)
		j := i + bytes.IndexByte(line[i:], '"')
		path := string(line[i:j])
		ci := bytes.Index(line, []byte(`content: \"`)) + len(`content: \"`)
		want := line[ci : ci+bytes.Index(line[ci:], []byte(`\\n`))]
		var st syscall.Stat_t
		if err := syscall.Lstat(path, &st); err != nil {
			os.Exit(1)
		}
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			os.Exit(1)
		}
		if fstat {
			var fst syscall.Stat_t
			if syscall.Fstat(fd, &fst) != nil || fst.Ino != st.Ino {
				os.Exit(1)
			}
		}
		k, _ := syscall.Read(fd, buf[:])
		syscall.Close(fd)
		same := k == len(want)+1 && bytes.Equal(buf[:k-1], want) && st.Mode&0o7777 == 0o644
		out = append(out[:0], `{"resource":"File[`...)
		out = append(out, path...)
		if same {
			out = append(out, `]","failed":false,"changed":false,"noop":false,"error":false,"exception":null}`+"\n"...)
		} else {
			out = append(out, `]","failed":false,"changed":true,"noop":false,"error":false,"exception":null}`+"\n"...)
		}
		os.Stdout.Write(out)
	}
}
