# bash completion for stkrec and stkreport (zsh: autoload -U bashcompinit && bashcompinit, then
# source this file). Options come from the tool's own --help, so they never fall out of step.
# Installed by `make install` as share/bash-completion/completions/{stkrec,stkreport}.

# Every -x / --long-option the tool's --help lists.
_stk_options() {
	"$1" --help 2>/dev/null | grep -oE -- '(^|[ ,])--?[A-Za-z][-A-Za-z0-9]*' | tr -d ' ,' | sort -u
}

# The sampling events -e accepts, from the help text's list.
_stk_events() {
	"$1" --help 2>/dev/null |
		awk '/-e, --event/ { on = 1; sub(/.*sampling event:/, ""); print; next }
		     on && /^ *-/ { exit } on { print }' |
		grep -oE '[a-z]+(-[a-z]+)+|cycles|instructions' | sort -u
}

# The word being completed as typed: bash splits words at ':' too (COMP_WORDBREAKS), and a
# tracepoint SPEC has two. (Without COMP_LINE, as some callers leave it: the last word.)
_stk_word() {
	local line=${COMP_LINE-${COMP_WORDS[COMP_CWORD]}}
	line=${line:0:${COMP_POINT:-${#line}}}
	printf '%s' "${line##*[[:space:]]}"
}

# Tracepoint SPECs for WORD from `stkrec -l` (root: tracefs is root's): the categories
# ("t:syscalls:") until WORD names one, then its events.
_stk_tracepoints() {
	local all
	all=$("$1" -l 2>/dev/null) || return
	case $2 in
	t:*:*) compgen -W "$all" -- "$2" ;;
	*) compgen -W "$(sed 's/:[^:]*$/:/' <<<"$all" | sort -u)" -- "$2" ;;
	esac
}

_stkrec() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} tool=${COMP_WORDS[0]}
	local word
	COMPREPLY=()
	case $prev in
	-o | --output) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
	-e | --event) mapfile -t COMPREPLY < <(compgen -W "$(_stk_events "$tool")" -- "$cur"); return ;;
	--unwind) mapfile -t COMPREPLY < <(compgen -W "fp cfi auto" -- "$cur"); return ;;
	--rotate) mapfile -t COMPREPLY < <(compgen -W "signal" -- "$cur"); return ;;
	--python-frames) mapfile -t COMPREPLY < <(compgen -W "native python mixed" -- "$cur"); return ;;
	-p | --pid) mapfile -t COMPREPLY < <(compgen -W "$(ps -e -o pid= 2>/dev/null)" -- "$cur"); return ;;
	-F | --frequency | -c | --count | -C | --cpu | -i | --interval | -D | --duration | \
	-L | -t | --tid | -m | -M | --min-block | --max-block | --min-block-time | \
	--max-block-time | --state | --stack-storage-size | --hash-storage-size | \
	--max-kprobes | --ringbuf-size | --unwind-memory | --max-files | --max-disk | --flight | \
	--flight-memory | --python-names) return ;;
	esac
	word=$(_stk_word)
	case $word in
	-*) mapfile -t COMPREPLY < <(compgen -W "$(_stk_options "$tool")" -- "$cur") ;;
	t:*)
		mapfile -t COMPREPLY < <(_stk_tracepoints "$tool" "$word")
		# a category goes on with its event: no space after "t:syscalls:"
		[[ ${COMPREPLY[0]:-} == *: ]] && compopt -o nospace 2>/dev/null
		# bash replaces only what follows the last ':' of the word
		[[ $COMP_WORDBREAKS == *:* ]] && COMPREPLY=("${COMPREPLY[@]#"${word%"${word##*:}"}"}")
		;;
	*) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;	# a binary to probe, or COMMAND
	esac
}

_stkreport() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} tool=${COMP_WORDS[0]}
	COMPREPLY=()
	case $prev in
	--by) mapfile -t COMPREPLY < <(compgen -W "host capture pid comm probe interval" -- "$cur"); return ;;
	--symfs | --debug-dir) mapfile -t COMPREPLY < <(compgen -d -- "$cur"); return ;;
	--python-frames) mapfile -t COMPREPLY < <(compgen -W "native python mixed" -- "$cur"); return ;;
	--sqlite | --pprof | --svg) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
	--sql | --pid | --comm | --probe | --time | --grep | --max-depth | --tree-min) return ;;
	esac
	case $cur in
	-*) mapfile -t COMPREPLY < <(compgen -W "$(_stk_options "$tool")" -- "$cur") ;;
	*) mapfile -t COMPREPLY < <(compgen -f -X '!*.stk' -- "$cur"; compgen -d -- "$cur") ;;
	esac
}

complete -F _stkrec stkrec
complete -F _stkreport stkreport
