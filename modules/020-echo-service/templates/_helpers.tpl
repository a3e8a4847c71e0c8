{{- define "echo-service.labels" -}}
app.kubernetes.io/name: echo-service
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "echo-service.selector" -}}
app.kubernetes.io/name: echo-service
{{- end -}}
