# Sourced by the test hooks: appends "<who>:<binding>" to $TRACE_FILE for
# every binding context the hook received; $who names the hook.
for b in $(sed 's/"binding":"\([^"]*\)"/\n\1\n/g' "$BINDING_CONTEXT_PATH" | grep -v '[{}]'); do
	echo "$who:$b" >>"$TRACE_FILE"
done
