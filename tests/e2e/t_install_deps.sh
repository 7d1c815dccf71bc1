#!/bin/sh
# t_install_deps.sh - with both MPI families installed, mpirun, mpiexec and
# mpicc stay Open MPI's (the tests call MPICH by its own names,
# mpiexec.hydra and mpicc.mpich): here, and in contrib/install-deps.sh test,
# which sets the alternatives back to Open MPI as root and fails loudly
# where they point elsewhere.  The script's own cases run against a stand-in
# update-alternatives and dpkg-query on PATH: the machine's alternatives are
# never changed.
. "$(dirname "$0")/lib.sh"
command -v update-alternatives >/dev/null 2>&1 || skip "skip: no update-alternatives (not Debian)"

# this machine: Open MPI's where it is installed
if command -v mpirun.openmpi >/dev/null 2>&1; then
    mpirun --version >"$TMP/v" 2>&1
    expect_grep "mpirun is Open MPI's" "Open MPI" "$TMP/v"
    mpiexec --version >"$TMP/v" 2>&1
    expect_grep "mpiexec is Open MPI's" "Open MPI\\|OpenRTE" "$TMP/v"
    mpicc --showme >"$TMP/v" 2>&1
    expect_grep "mpicc is Open MPI's (--showme)" "openmpi" "$TMP/v"
fi

# stand-ins: every package installed (so nothing is fetched); the
# alternatives in $TMP/alt.NAME, --set writes there unless $TMP/noset
mkdir -p "$TMP/bin"
cat >"$TMP/bin/dpkg-query" <<'EOF'
#!/bin/sh
echo "install ok installed"
EOF
cat >"$TMP/bin/update-alternatives" <<EOF
#!/bin/sh
case \$1 in
--query) echo "Name: \$2"; echo "Value: \$(cat "$TMP/alt.\$2")" ;;
--list) [ "\$2" = mpi ] && printf '/usr/bin/mpicc.mpich\n/usr/bin/mpicc.openmpi\n'
        [ "\$2" = mpirun ] && printf '/usr/bin/mpirun.mpich\n/usr/bin/mpirun.openmpi\n' ;;
--set) [ -e "$TMP/noset" ] && exit 2; echo "\$3" >"$TMP/alt.\$2" ;;
esac
EOF
chmod +x "$TMP/bin/dpkg-query" "$TMP/bin/update-alternatives"
deps() { env PATH="$TMP/bin:$PATH" sh "$TOP/contrib/install-deps.sh" test; }

echo /usr/bin/mpicc.openmpi >"$TMP/alt.mpi"; echo /usr/bin/mpirun.openmpi >"$TMP/alt.mpirun"
expect_rc "install-deps.sh test: Open MPI's, nothing to do" 0 deps
expect_eq "  says nothing" "$(cat "$TMP/err")" ""

echo /usr/bin/mpicc.mpich >"$TMP/alt.mpi"; echo /usr/bin/mpirun.mpich >"$TMP/alt.mpirun"
if [ "$(id -u)" -eq 0 ]; then
    expect_rc "MPICH's in the alternatives, as root: set back" 0 deps
    expect_eq "  mpi is Open MPI's again" "$(cat "$TMP/alt.mpi")" /usr/bin/mpicc.openmpi
    expect_eq "  mpirun too" "$(cat "$TMP/alt.mpirun")" /usr/bin/mpirun.openmpi
    echo /usr/bin/mpirun.mpich >"$TMP/alt.mpirun"
    touch "$TMP/noset"
fi
expect_rc "MPICH's in the alternatives and not set back: fails" 1 deps
expect_grep "  loudly: which" "^dlrun: the alternatives do not point at Open MPI: mpirun=/usr/bin/mpirun.mpich" "$TMP/err"
expect_grep "  and the command" "update-alternatives --set mpi /usr/bin/mpicc.openmpi && update-alternatives --set mpirun /usr/bin/mpirun.openmpi" "$TMP/err"
done_testing
