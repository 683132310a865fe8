# Sourced by the overhead benchmarks. servers_cpu_ns: the run time of every
# thread of the processes `server_pids` prints, in ns (from schedstat, which
# counts what each thread ran, however the machine's other load moves wall time).
servers_cpu_ns() {
  local total=0 pid task ns
  for pid in $(server_pids); do
    for task in /proc/"$pid"/task/*/schedstat; do
      read -r ns _ <"$task" && total=$((total + ns))
    done
  done
  echo "$total"
}
