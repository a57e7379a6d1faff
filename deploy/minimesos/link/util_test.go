package link

import (
	"bytes"
	"io"
	"strings"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
