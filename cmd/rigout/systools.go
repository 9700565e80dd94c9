package main

import "flag"

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
