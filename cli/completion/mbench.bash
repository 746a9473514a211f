# bash completion for mbench (installed as
# share/bash-completion/completions/mbench).
#
# The script lists none of mbench's commands, options or names: each comes
# from the mbench being completed when TAB is pressed, so it cannot fall
# behind that mbench. Commands are `mbench --help`'s, a command's options
# its `--help`'s (a metavar a|b|c completes to a, b or c; FILE to a file),
# and the names an option takes `mbench list LIST --names`.

# The list whose names the value of option $1 is.
_mbench_list_of() {
  case $1 in
  --op) echo ops ;;
  --model) echo models ;;
  --recipe) echo recipes ;;
  --dtype | --out-dtype | --dtype-b | --dtype-q) echo dtypes ;;
  --backend) echo backends ;;
  esac
}

# "LONG SHORT METAVAR" ("-" for none) per option of command $2 (the suite
# when empty) of mbench $1, read off its --help: the lines after
# "options:", "  -o, --output FILE   help". A metavar follows the name
# after one space; the help, after the column's padding.
_mbench_options() {
  "$1" ${2:-suite} --help 2>/dev/null | awk '
    /^options:/ { on = 1; next }
    on && match($0, /^  (-[A-Za-z], )? *--[a-z0-9-]+/) {
      head = substr($0, 1, RLENGTH); rest = substr($0, RLENGTH + 1)
      short = "-"; if (head ~ /^  -[A-Za-z], /) short = substr(head, 3, 2)
      long = head; sub(/^.*--/, "--", long)
      meta = "-"; if (rest ~ /^ [^ ]/) { meta = substr(rest, 2); sub(/ .*/, "", meta) }
      print long, short, meta
    }'
}

# The commands: the lines under "commands:" in mbench --help.
_mbench_commands() {
  "$1" --help 2>/dev/null | awk '
    /^commands:/ { on = 1; next }
    on && /^$/ { exit }
    on && $1 ~ /^[a-z][a-z0-9-]*$/ { print $1 }'
}

# COMPREPLY: the words of $1 that start with $2, each after $3 (what comes
# before them in the word).
_mbench_reply() {
  local IFS=$'\n'
  COMPREPLY=($(compgen -P "$3" -W "$1" -- "$2"))
}

_mbench() {
  local mbench=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]}
  local prev=${COMP_WORDS[COMP_CWORD - 1]} cmd="" first=1
  COMPREPLY=()
  # The command is the first word; without one mbench runs the suite, whose
  # options come first.
  if ((COMP_CWORD > 1)) && [[ ${COMP_WORDS[1]} != -* ]]; then
    cmd=${COMP_WORDS[1]}
    first=2
  fi
  # --option=value: the value. bash splits the word at "=" (COMP_WORDBREAKS)
  # into --option, =, value; without "=" there it is one word.
  if [[ $cur == = ]]; then
    cur=""
  elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
    prev=${COMP_WORDS[COMP_CWORD - 2]}
  elif [[ $cur == --*=* ]]; then
    prev=${cur%%=*}
    cur=${cur#*=}
  fi

  # The value of an option that takes one; of a list (DT[,...]), the last.
  local long short meta list head=""
  while read -r long short meta; do
    [[ $meta != - && ($prev == "$long" || $prev == "$short") ]] || continue
    if [[ $meta == *',...]' && $cur == *,* ]]; then
      head=${cur%,*},
      cur=${cur##*,}
    fi
    list=$(_mbench_list_of "$long")
    if [[ -n $list ]]; then
      _mbench_reply "$("$mbench" list "$list" --names 2>/dev/null)" "$cur" "$head"
    elif [[ $meta =~ ^[a-z0-9_-]+(\|[a-z0-9_-]+)+$ ]]; then
      _mbench_reply "${meta//|/$'\n'}" "$cur"
    elif [[ $meta == FILE ]]; then
      compopt -o filenames 2>/dev/null
      _mbench_reply "$(compgen -f -- "$cur")" "$cur"
    fi
    return 0
  done < <(_mbench_options "$mbench" "$cmd")

  if [[ $cur == -* ]]; then
    local opts
    opts=$(_mbench_options "$mbench" "$cmd" | cut -d' ' -f1)
    ((COMP_CWORD == 1)) && opts+=$'\n--version'
    _mbench_reply "$opts" "$cur"
  elif ((COMP_CWORD == 1)); then
    _mbench_reply "$(_mbench_commands "$mbench")" "$cur"
  elif [[ $cmd == list ]]; then
    # list LIST [NAME]: the words before this one that are not options
    local words=() i
    for ((i = first; i < COMP_CWORD; i++)); do
      [[ ${COMP_WORDS[i]} == -* ]] || words+=("${COMP_WORDS[i]}")
    done
    if ((${#words[@]} == 0)); then
      _mbench_reply "$("$mbench" list --names 2>/dev/null)" "$cur"
    elif ((${#words[@]} == 1)) && [[ ${words[0]} == ops || ${words[0]} == presets ]]; then
      _mbench_reply "$("$mbench" list "${words[0]}" --names 2>/dev/null)" "$cur"
    fi
  elif [[ $cmd == compare || $cmd == merge || $cmd == report ]]; then # result files
    compopt -o filenames 2>/dev/null
    _mbench_reply "$(compgen -f -- "$cur")" "$cur"
  fi
  return 0
}

complete -F _mbench mbench
