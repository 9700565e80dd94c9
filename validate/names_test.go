package validate_test

import "github.com/rigout/rigout/validate"

// The tables below cover issue 27: names and arithmetic that bash
// evaluates, and programs that read their code from standard input. Each
// refusal has its near misses, and both seed FuzzCheck like checkCases.
// Every refused command is harmless if the refusal regresses and it runs:
// the substitutions only touch a relative file "p" or delete "/" through
// a check that is never run here.

const rHidden = validate.RuleHiddenCode

// nameCases: wherever bash takes a variable name or evaluates arithmetic,
// a subscript or substitution in the word runs as code.
var nameCases = []checkCase{
	// The forms of the issue: the substitution is judged as a command…
	{cmd: `test -v 'x[$(rm -rf /)]'`, rule: rDel},
	{cmd: `[ -v 'x[$(rm -rf /)]' ]`, rule: rDel},
	{cmd: `[[ -v 'x[$(rm -rf /)]' ]]`, rule: rDel},
	{cmd: `[[ 'x[$(rm -rf /)]' -eq 0 ]]`, rule: rDel},
	{cmd: `read 'x[$(rm -rf /)]' <<<hi`, rule: rDel},
	{cmd: `printf -v 'x[$(rm -rf /)]' hi`, rule: rDel},
	{cmd: `let 'x[$(rm -rf /)]=1'`, rule: rDel},
	{cmd: `declare 'x[$(rm -rf /)]'=1`, rule: rDel},
	{cmd: `declare -a x; x['$(rm -rf /)']=1`, rule: rDel},
	{cmd: `declare -n r='x[$(rm -rf /)]'; echo $r`, rule: rDel},
	{cmd: `typeset -i y='x[$(rm -rf /)]'`, rule: rDel},
	{cmd: `declare -i y; y='x[$(rm -rf /)]'`, rule: rDel},
	{cmd: `typeset -i y=1; y+='x[$(rm -rf /)]'`, rule: rDel},
	{cmd: `y='x[$(rm -rf /)]'; echo $((y))`, rule: rDel},
	{cmd: `y='x[$(rm -rf /)]'; echo $(($y))`, rule: rDel},
	{cmd: `x='$(rm -rf /)'; echo ${x@P}`, rule: rDel},
	{cmd: `r='a[$(rm -rf /)]'; echo ${!r}`, rule: rDel},
	{cmd: `unset 'x[$(rm -rf /)]'`, rule: rDel},
	{cmd: "mapfile 'x[`rm -rf /`]' < f", rule: rDel},
	{cmd: `mapfile -C 'rm -rf /' -c 1 lines < f`, rule: rDel},
	{cmd: `getopts ab 'x[$(rm -rf /)]'`, rule: rDel},
	{cmd: `local_f() { local 'x[$(rm -rf /)]'=1; }; local_f`, rule: rDel},
	{cmd: `export 'x[$(rm -rf /)]'=1`, rule: rDel},
	{cmd: `declare -a x='([$(rm -rf /)]=1)'`, rule: rDel},
	{cmd: `(( x[$(rm -rf /)] ))`, rule: rDel},
	{cmd: `echo ${a:$(rm -rf /):1}`, rule: rDel},
	{cmd: `a='b[$(rm -rf /)]'; y=a; echo $((y))`, rule: rDel},
	// … and a substitution whose output is evaluated is code the checker
	// cannot see, even when the command itself is harmless.
	{cmd: `test -v 'x[$(touch p)]'`, rule: rHidden},
	{cmd: `[[ 'x[$(touch p)]' -eq 0 ]]`, rule: rHidden},
	{cmd: `printf -v 'x[$(touch p)]' hi`, rule: rHidden},
	{cmd: `let 'x[$(touch p)]=1'`, rule: rHidden},
	{cmd: `declare -a x; x['$(touch p)']=1`, rule: rHidden},
	{cmd: `y='x[$(touch p)]'; echo $((y))`, rule: rHidden},
	// What cannot be resolved statically.
	{cmd: `read n; echo $((n + 1))`, rule: rHidden},
	{cmd: `n=$(cat count); echo $((n + 1))`, rule: rHidden},
	{cmd: `echo $(( $(cat count) + 1 ))`, rule: rHidden},
	{cmd: `read n; [[ $n -gt 0 ]]`, rule: rHidden},
	{cmd: `read n; (( n > 0 ))`, rule: rHidden},
	{cmd: `read name; printf -v "$name" %s x`, rule: rHidden},
	{cmd: `test -v "$1"`, rule: rHidden},
	{cmd: `echo ${!ref}`, rule: rHidden},
	{cmd: `read p; echo ${p@P}`, rule: rHidden},
	{cmd: `echo ${PS9@P}`, rule: rHidden},
	{cmd: `read v; declare -i y="$v"`, rule: rHidden},
	{cmd: `read v; declare -n r="$v"`, rule: rHidden},
	// Code an interactive shell runs before each prompt.
	{cmd: `PROMPT_COMMAND='rm -rf /'`, rule: rDel},
	{cmd: `export PROMPT_COMMAND='rm -rf /'`, rule: rDel},
	{cmd: `PS1='$(rm -rf /)> '`, rule: rDel},
	{cmd: "PS4='`rm -rf /`'", rule: rDel},
	{cmd: `read p; PROMPT_COMMAND="$p"`, rule: rHidden},
	// Near misses: literal names, numbers and known values.
	{cmd: `PROMPT_COMMAND='history -a'`},
	{cmd: `PS1='\u@\h:\w\$ '`},
	{cmd: `PS1='$(date +%H:%M)> '`},
	{cmd: "test -v HOME"},
	{cmd: "[ -v PATH ]"},
	{cmd: "[[ -v 'x[1]' ]]"},
	{cmd: "[[ 3 -eq 0 ]]"},
	{cmd: "[[ $UNSET_FROM_ENV -eq 0 ]]"},
	{cmd: "read x <<<hi"},
	{cmd: "read -r a b"},
	{cmd: `read -a arr <<<"a b"`},
	{cmd: "printf -v x %s hi"},
	{cmd: "printf -v 'x[1]' %s hi"},
	{cmd: "let x=1+2"},
	{cmd: "let 'x[1]=1'"},
	{cmd: "declare x=1"},
	{cmd: "declare -a x; x[1]=1"},
	{cmd: "declare -A m; m[key]=1"},
	{cmd: "declare -A m=([a]=1 [b]=2)"},
	{cmd: "declare -n r=x; echo $r"},
	{cmd: "typeset -i y=3+4"},
	{cmd: "declare -i n; n=n+1; n=$((n*2))"},
	{cmd: "y=5; echo $((y))"},
	{cmd: "i=0; while [ $i -lt 3 ]; do i=$((i+1)); done"},
	{cmd: "for i in 1 2 3; do echo $((i*2)); done"},
	{cmd: "for ((i=0; i<3; i++)); do echo $i; done"},
	{cmd: "n=$(wc -l < f); echo $((n+1))"},
	{cmd: "echo $(( $(nproc) * 2 ))"},
	{cmd: "for i in $(seq 1 5); do echo $((i*i)); done"},
	{cmd: `arr=(a b c); for i in "${!arr[@]}"; do echo "${arr[$i]}"; done`},
	{cmd: "x='hi'; echo ${x@P}"},
	{cmd: `x='\u@\h'; echo ${x@P}`},
	{cmd: "x=HOME; echo ${!x}"},
	{cmd: "echo ${!BASH*}"},
	{cmd: "echo ${#PATH} $((RANDOM % 10)) ${PATH:0:5} $(( 16#ff + 0x1f ))"},
	{cmd: "unset x 'x[1]'"},
	{cmd: "mapfile -t lines < f"},
	{cmd: "getopts ab opt"},
	{cmd: "wait -n"},
	{cmd: "export FOO=bar; readonly X=1"},
	{cmd: `echo "x[$(date)]"`},
}

func ptr(s string) *string { return &s }

// stdinCases: the stdin argument is code for a program that reads its
// program from standard input, and data for every other program.
var stdinCases = []checkCase{
	{cmd: "bash -s", stdin: ptr("rm -rf /etc"), rule: rDel},
	{cmd: "bash", stdin: ptr("rm -rf /"), rule: rDel},
	{cmd: "sh", stdin: ptr("cd / && rm -rf *"), rule: rDel},
	{cmd: "zsh -s -- a b", stdin: ptr("rm -rf /"), rule: rDel},
	{cmd: "dash", stdin: ptr("rm -rf /"), rule: rDel},
	{cmd: "cat | sh", stdin: ptr("rm -rf /"), rule: rDel},
	{cmd: "bash /dev/stdin", stdin: ptr("rm -rf /"), rule: rDel},
	{cmd: "source /dev/stdin", stdin: ptr("rm -rf /"), rule: rDel},
	{cmd: "python3 -", stdin: ptr("import shutil; shutil.rmtree('/etc')"), rule: rDel},
	{cmd: "python3", stdin: ptr("import os; os.system('rm -rf /')"), rule: rDel},
	{cmd: "perl", stdin: ptr("system('rm -rf /')"), rule: rDel},
	{cmd: "xargs rm -rf", stdin: ptr("/"), rule: rDel},
	{cmd: "make -f -", stdin: ptr("all:\n\trm -rf /\n"), rule: rDel},
	{cmd: "cat > run.sh; bash run.sh", stdin: ptr("rm -rf /"), rule: rDel},
	{cmd: "bash -s", stdin: ptr("if then"), rule: rParse},
	// Near misses: the same text as data, or a harmless script.
	{cmd: "cat", stdin: ptr("rm -rf /")},
	{cmd: "grep -c rm", stdin: ptr("rm -rf /")},
	{cmd: "wc -l", stdin: ptr("rm -rf /etc")},
	{cmd: "bash -c 'echo hi'", stdin: ptr("rm -rf /")},
	{cmd: "bash script.sh", stdin: ptr("rm -rf /")},
	{cmd: "bash -s", stdin: ptr("ls -la /tmp")},
	{cmd: "python3 -", stdin: ptr("print('rm -rf /')")},
	{cmd: "bash -s"},
	{cmd: "sh", stdin: ptr("")},
}
