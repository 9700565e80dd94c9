/* threadprobe: how many of the parent's threads can this process signal?
 * It sends signal 0 (a permission check that delivers nothing) to every
 * thread of its parent, several rounds, and prints "hits tries". A
 * sandboxed command must reach none: a thread it could signal is a
 * thread whose SIGKILL would end the gateway. Built by
 * TestSandboxLaunchThread; a static C program starts faster than any
 * shell, so it probes the moment right after exec. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc > 1)
		for (int i = 0; i < 10000 && access(argv[1], F_OK) != 0; i++)
			usleep(1000);
	int ppid = getppid(), hits = 0, tries = 0;
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%d/task", ppid);
	for (int round = 0; round < 50; round++) {
		DIR *d = opendir(dir);
		if (!d)
			break;
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			tries++;
			if (syscall(SYS_tgkill, ppid, atoi(e->d_name), 0) == 0)
				hits++;
		}
		closedir(d);
	}
	printf("%d %d\n", hits, tries);
	return 0;
}
