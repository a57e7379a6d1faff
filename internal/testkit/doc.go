// Package testkit groups the test kits that several packages' tests share: each subpackage
// starts a real part (a minimesos cluster, an S3 server, ZooKeeper through mesostest) or runs
// one scenario against the package under test and asserts its outcome. Nothing shipped
// imports them.
package testkit
