#!/bin/bash
# Run a command in the Debian 13 guest (scripts/build-debian-guest.sh):
# vm-run.sh --distro, which documents the options.
# usage: distro-run.sh [--disk FILE] [--share DIR] [--workdir DIR] [--user]
#                      [--timeout SECONDS] [--cards N] [--mem-size SIZE]
#                      [--shell] [--] COMMAND...
#   --disk FILE  keep the guest's disk in the qcow2 overlay FILE (made if
#                missing) so that a next run boots what this one left
exec "$(dirname "$0")/vm-run.sh" --distro "$@"
