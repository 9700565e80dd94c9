// Package config is rigout's configuration file: its schema as Go types,
// reading it as strictly as the rigout binary does, checking it, and
// writing it back.
//
// # Overview
//
// The file (rigout --config, RIGOUT_CONFIG) is one JSON object, [File].
// Every key is optional and the zero File is the defaults. The file never
// holds a secret itself: tokens and client secrets are given as SHA-256
// digests or as the names of environment variables that hold them
// ([File.SecretEnv] lists those variables).
//
// Reading is strict. [Load] and [Parse] refuse an unknown key (matched
// exactly, with a "did you mean" for a near miss), a syntax error and a
// value of the wrong type, each as a [PositionError] with the file, line
// and column. [Unmarshal] reads other documents the same way.
//
// Checking goes beyond the syntax. [File.Check] reads the variables the
// file names and reports empty ones, the command policy's mistakes
// ([File.CommandPolicy]) and rate limits that do not parse
// ([RateLimit.Limits]). What needs the executor to be judged (the hosts as
// the SSH router reads them, the downstream servers) is checked by the
// assembly (package assembly), whose Check is what `rigout config check`
// runs. This package links no executor, SSH or database code, so a
// program that only edits configurations stays small.
//
// Writing: [File.Marshal], [File.Write] and [File.WriteFile] (owner-only,
// atomic) write what [Load] reads back.
//
// # Usage
//
//	f, err := config.Load(path) // *config.PositionError on a mistake
//	if err != nil { … }
//	if problems := f.Check(os.Getenv); len(problems) > 0 { … }
//	tokens, err := f.AuthTokens(os.Getenv) // for auth.Config
//	policy, err := f.CommandPolicy()       // for gate.Config, nil: the default
//	f.Families.Docker = true
//	err = f.WriteFile(path)
//
// The package keeps no state; a File is a plain value, safe to read from
// several goroutines, not to change while others read it.
package config
