package main

import (
	"flag"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/gate"
	"github.com/rigout/rigout/sessions"
	"github.com/rigout/rigout/tools/docker"
	"github.com/rigout/rigout/tools/packages"
	"github.com/rigout/rigout/tools/system"
)

// familyFlags are the flags that turn the optional families on and off;
// they win over the file.
type familyFlags struct {
	system, docker, packages bool
}

func (f *familyFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.system, "enable-system-tools", false, "serve system_monitoring and get_hardware_info (off by default; config tool_families.system)")
	fs.BoolVar(&f.docker, "enable-docker", false, "serve docker_operations (off by default; config tool_families.docker)")
	fs.BoolVar(&f.packages, "enable-packages", false, "serve install_software and environment_setup (off by default; config tool_families.packages)")
}

// systools builds the optional families the flags and the file turn on,
// on the gateway's local runner, router, gate and background processes.
func (c *common) systools(local *exec.Local, router *exec.Router, g *gate.Gate, procs *sessions.Manager) ([]rigout.Tool, []string, error) {
	ff := c.file.Families
	var tools []rigout.Tool
	var instructions []string
	if ff.System || c.families.system {
		sf, err := system.New(system.Config{Local: local, Router: router, Gate: g})
		if err != nil {
			return nil, nil, err
		}
		tools, instructions = append(tools, sf.Tools()...), append(instructions, sf.Instructions())
	}
	if ff.Docker || c.families.docker {
		df, err := docker.New(docker.Config{Local: local, Router: router, Gate: g})
		if err != nil {
			return nil, nil, err
		}
		tools, instructions = append(tools, df.Tools()...), append(instructions, df.Instructions())
	}
	if ff.Packages || c.families.packages {
		pf, err := packages.New(packages.Config{Local: local, Router: router, Gate: g, Processes: procs, PipOptions: ff.PipOptions})
		if err != nil {
			return nil, nil, err
		}
		tools, instructions = append(tools, pf.Tools()...), append(instructions, pf.Instructions())
	}
	return tools, instructions, nil
}
