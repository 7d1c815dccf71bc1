# dlrun.bash - bash completion for dlrun: subcommands, their options (read
# from `dlrun SUBCOMMAND --help`, so they never go stale), option values,
# and the profile names of the sites.yaml files (`dlrun script
# --list-profiles`).  Installed by `make install` into
# PREFIX/share/bash-completion/completions/dlrun; or source it.

_dlrun_subcommands="run env plan check status hosts broker kv script submit"

_dlrun() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local dl=${COMP_WORDS[0]} sub=run w
    COMPREPLY=()
    if [ "$COMP_CWORD" -eq 1 ] && [[ $cur != -* ]]; then
        COMPREPLY=($(compgen -W "$_dlrun_subcommands" -- "$cur"))
        [ ${#COMPREPLY[@]} -eq 0 ] && COMPREPLY=($(compgen -c -- "$cur"))
        return 0
    fi
    for w in $_dlrun_subcommands; do
        [ "${COMP_WORDS[1]}" = "$w" ] && sub=$w
    done
    case $prev in
    -P|--profile)
        COMPREPLY=($(compgen -W "$("$dl" script --list-profiles 2>/dev/null | cut -f1)" -- "$cur"))
        return 0 ;;
    --scheduler) COMPREPLY=($(compgen -W "slurm pbs nqsv lsf pjm flux" -- "$cur")); return 0 ;;
    --tasks) COMPREPLY=($(compgen -W "per-node per-gpu" -- "$cur")); return 0 ;;
    --launcher)
        case $sub in
        script|submit) w="dlrun mpirun" ;;
        *) w="srun ssh local" ;;
        esac
        COMPREPLY=($(compgen -W "$w" -- "$cur")); return 0 ;;
    --map-by) COMPREPLY=($(compgen -W "slot core socket numa ppr:" -- "$cur")); return 0 ;;
    --bind-to) COMPREPLY=($(compgen -W "core numa socket none" -- "$cur")); return 0 ;;
    --gpu-bind) COMPREPLY=($(compgen -W "closest isolate none" -- "$cur")); return 0 ;;
    -o|--output|--template|--config|--hostfile|--machinefile|--dlrun|--topology|--summary|--output-dir)
        COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
    esac
    if [[ $cur == -* ]]; then
        local opts
        opts=$("$dl" "$sub" --help 2>&1 | grep -o -- '--[a-z][a-z_-]*' | sort -u)
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return 0
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}
complete -F _dlrun dlrun
