// Package launchbackoff spaces launches on a Mesos agent whose recent
// launches were lost before their executor came up, for both Mesos
// backends (coarse: the executor registers with the driver's gateway;
// fine: the executor's first status update): the first loss waits Base
// before the next launch there, each further one twice as long, up to Max.
// A master or agent that keeps refusing launches (offers made from a stale
// view after a restart: TASK_LOST "Task assumes outdated resource state")
// thus sees a few launches per agent, not one per offer, whatever the
// cause; a registration resets it. InfrastructureLoss tells the losses
// that say nothing about the agent's health, which never exclude it.
package launchbackoff
