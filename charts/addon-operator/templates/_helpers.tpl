{{/*
name is the chart name, or nameOverride.
*/}}
{{- define "addon-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
fullname prefixes every object's name: fullnameOverride, else the release
name when it already holds the chart name, else release-chart. Cut to 63
characters, the limit of a label value and of a Service name.
*/}}
{{- define "addon-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
clusterName names cluster-scoped objects. Release names are unique only
within a namespace, so the namespace is part of the name.
*/}}
{{- define "addon-operator.clusterName" -}}
{{- printf "%s-%s" .Release.Namespace (include "addon-operator.fullname" .) }}
{{- end }}

{{/*
chart is name-version, for the helm.sh/chart label.
*/}}
{{- define "addon-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
labels go on every object.
*/}}
{{- define "addon-operator.labels" -}}
helm.sh/chart: {{ include "addon-operator.chart" . }}
{{ include "addon-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
selectorLabels select the operator's pods; they must never change for a
release, since a Deployment's selector is immutable.
*/}}
{{- define "addon-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "addon-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
serviceAccountName is the ServiceAccount the operator runs as.
*/}}
{{- define "addon-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "addon-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
ha is "true" when leader election is on (ha.enabled or replicas > 1) and
empty otherwise, so that it can be used in if.
*/}}
{{- define "addon-operator.ha" -}}
{{- if or .Values.ha.enabled (gt (int .Values.replicas) 1) }}true{{ end }}
{{- end }}

{{/*
image is repository:tag, the tag defaulting to appVersion.
*/}}
{{- define "addon-operator.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/*
webhookClientCA is "true" when the webhook server requires the API
server's client certificate (webhooks.clientCA names a Secret or a
ConfigMap with the CA bundle) and empty otherwise.
*/}}
{{- define "addon-operator.webhookClientCA" -}}
{{- if and .Values.webhooks.clientCA.secretName .Values.webhooks.clientCA.configMapName }}
{{- fail "webhooks.clientCA: set secretName or configMapName, not both" }}
{{- end }}
{{- if or .Values.webhooks.clientCA.secretName .Values.webhooks.clientCA.configMapName }}true{{ end }}
{{- end }}
