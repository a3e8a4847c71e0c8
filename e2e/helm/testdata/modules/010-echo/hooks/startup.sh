#!/bin/sh
# A module hook: belongs to the operator, never part of the chart.
echo '{"configVersion":"v1","onStartup":1}'
