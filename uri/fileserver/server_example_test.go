package fileserver_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/uri"
	"github.com/flint-mesos/flint/uri/fileserver"
)

func ExampleServer() {
	dir, err := os.MkdirTemp("", "fileserver")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "job.conf"), []byte("partitions=8\n"), 0o644); err != nil {
		log.Fatal(err)
	}

	// The driver publishes a file.
	token := fileserver.NewToken()
	srv, err := fileserver.New(fileserver.Config{Token: token})
	if err != nil {
		log.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.Serve(lis); err != nil {
		log.Fatal(err)
	}
	defer srv.Close(context.Background())
	file, err := srv.AddFile(filepath.Join(dir, "job.conf"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.HasSuffix(file.URL, "/files/"+file.SHA256+"/job.conf"))

	// An executor fetches it, presenting the token to this server only.
	header, err := fileserver.TokenHeader(srv.URL(), token)
	if err != nil {
		log.Fatal(err)
	}
	sandbox := filepath.Join(dir, "sandbox")
	res, err := uri.New(uri.Config{Header: header}).Fetch(context.Background(),
		[]mesos.CommandInfo_URI{{Value: file.URL}}, sandbox)
	if err != nil {
		log.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(sandbox, res[0].Path))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s, %d bytes: %s", res[0].Path, res[0].Bytes, b)
	// Output:
	// true
	// job.conf, 13 bytes: partitions=8
}
