/*
 * pause: the process of a pod's sandbox container. It holds the pod's
 * namespaces open and does nothing else: it sleeps until SIGTERM or SIGINT
 * and then exits 0. As PID 1 of a pod that shares its process namespace,
 * it also reaps the zombies orphaned to it.
 *
 * Built static (gcc -static), so its image needs no library.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define VERSION "1.0"

static volatile sig_atomic_t stopping;

static void on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

static void on_child(int sig)
{
	int saved = errno;

	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	errno = saved;
}

static int handle(int sig, void (*handler)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART | (sig == SIGCHLD ? SA_NOCLDSTOP : 0);
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL);
}

int main(int argc, char **argv)
{
	sigset_t blocked, waiting;

	if (argc == 2 && strcmp(argv[1], "-v") == 0) {
		printf("pause %s (multi-operator)\n", VERSION);
		return 0;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: %s [-v]\n", argv[0]);
		return 2;
	}
	if (getpid() != 1)
		fprintf(stderr, "pause: warning: not PID 1\n");

	/* Block the signals, then wait for them with sigsuspend: a signal that
	 * comes between the check of stopping and the wait is not lost. */
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGINT);
	sigaddset(&blocked, SIGTERM);
	sigaddset(&blocked, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &blocked, &waiting) != 0 ||
	    handle(SIGINT, on_stop) != 0 || handle(SIGTERM, on_stop) != 0 ||
	    handle(SIGCHLD, on_child) != 0) {
		perror("pause: signals");
		return 1;
	}
	sigdelset(&waiting, SIGINT);
	sigdelset(&waiting, SIGTERM);
	sigdelset(&waiting, SIGCHLD);
	while (!stopping)
		sigsuspend(&waiting);
	return 0;
}
