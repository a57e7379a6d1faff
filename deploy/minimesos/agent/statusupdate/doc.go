// Package statusupdate is the minimesos agent's status update manager. It
// keeps one ordered stream of updates per task, fills in agent_id, forwards
// only the head of each stream to the master and retries it with
// exponential backoff until the framework's acknowledgement comes back;
// then it forwards the next one. Duplicate updates (same uuid) are not
// queued again but reported so the agent can re-acknowledge them to the
// executor. After the terminal update is acknowledged the stream ends.
package statusupdate
