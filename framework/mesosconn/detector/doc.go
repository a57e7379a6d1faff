// Package detector finds the leading Mesos master for a Flint master URL.
//
// ParseMaster reads `mesos://host:port`, `mesos://zk://[user:pass@]host:2181,host2:2181/path`
// (also bare `zk://…` and `http(s)://host:port`). A Detector reports the leader on a channel
// that always holds only the newest value:
//
//   - Static reports its one address and nothing after;
//   - ZK reads Mesos' leader-election znodes under the path: the children named
//     `json.info_<sequence>` are the contenders, the lowest sequence leads, and its data is the
//     leader's MasterInfo as JSON (address.hostname / address.ip / address.port; the legacy
//     hostname, ip (network byte order) and port fields as a fallback). It watches the path and
//     reports every change, a zero Leader while no master leads, and survives ZooKeeper
//     disconnections and session expiry (go-zookeeper reconnects; the watch is then re-armed).
//
// The MasterInfo JSON is decoded with encoding/json into our own struct rather than mesos-go's
// generated decoder, which rejects enum values newer than its protos (e.g. capability QUOTA_V2
// written by Mesos 1.11+).
//
// The package owns leader detection only; subscribing to the leader and following changes is
// package mesosconn's job.
package detector
