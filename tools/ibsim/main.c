/* ibsim — command-line simulator for ibdyn scenes.
 *   ibsim [run] [SCENE.xml] [options]     simulate (see `ibsim run --help`)
 *   ibsim gen chain N | tree DEPTH [-o F]  write a benchmark model as a scene (see `ibsim gen --help`)
 * Subcommands are looked up in kCommands; an argument list that does not start with a command
 * name is handed to `run`. Exit codes: 0 success, 1 internal failure, 2 bad input. */
#include <stdio.h>
#include <string.h>

#include <ibdyn/ibdyn.h>

#include "cli_args.h"
#include "gen.h"
#include "run.h"

/** A subcommand: receives its own arguments (without the program and command names). */
typedef int ibsimCommandFn(int argc, char** argv);

static int commandRun(int argc, char** argv)
{
	ibsimRunOptions options;
	char msg[1024] = "";
	switch (ibsimParseRunArgs(argc, argv, &options, msg, sizeof msg)) {
	case IBSIM_PARSE_HELP:
		ibsimPrintRunUsage(stdout);
		return IBSIM_EXIT_OK;
	case IBSIM_PARSE_ERROR:
		fprintf(stderr, "ibsim: error: %s\n", msg);
		fprintf(stderr, "usage: ibsim [run] [SCENE.xml] [options]   (ibsim --help for more)\n");
		return IBSIM_EXIT_USAGE;
	case IBSIM_PARSE_OK:
		break;
	}
	return ibsimRun(&options);
}

static const struct {
	const char* name;
	const char* summary;
	ibsimCommandFn* fn;
} kCommands[] = {
    {"run", "simulate a scene file or the built-in default scene (the default command)", commandRun},
    {"gen", "write the chain or tree benchmark model (dissertation 3.3.3.1) as a scene file", ibsimGen},
};
enum { IBSIM_COMMAND_COUNT = (int)(sizeof kCommands / sizeof kCommands[0]) };

static void printUsage(FILE* out)
{
	fprintf(out,
	        "ibsim - impulse-based rigid-body simulator (ibdyn %d.%d.%d)\n\n"
	        "usage: ibsim [COMMAND] [arguments]\n\ncommands:\n",
	        ibGetVersion().major, ibGetVersion().minor, ibGetVersion().patch);
	for (int i = 0; i < IBSIM_COMMAND_COUNT; ++i) fprintf(out, "  %-8s %s\n", kCommands[i].name, kCommands[i].summary);
	fprintf(out, "\n'ibsim COMMAND --help' describes a command. Without a command, 'run' is meant:\n\n");
	ibsimPrintRunUsage(out);
}

int main(int argc, char** argv)
{
	if (argc >= 2) {
		for (int i = 0; i < IBSIM_COMMAND_COUNT; ++i)
			if (strcmp(argv[1], kCommands[i].name) == 0) return kCommands[i].fn(argc - 2, argv + 2);
		if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
			printUsage(stdout);
			return IBSIM_EXIT_OK;
		}
		if (strcmp(argv[1], "--version") == 0) {
			ibVersion v = ibGetVersion();
			printf("ibsim (ibdyn %d.%d.%d)\n", v.major, v.minor, v.patch);
			return IBSIM_EXIT_OK;
		}
	}
	return commandRun(argc > 1 ? argc - 1 : 0, argv + 1);
}
