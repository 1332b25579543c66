{{/* Shared pieces of the gw chart. */}}

{{- define "gw.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "gw.labels" -}}
app: gw
app.kubernetes.io/part-of: gw
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{/* The container security context every gw container runs with. */}}
{{- define "gw.securityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
runAsUser: 10101
capabilities:
  drop: ["ALL"]
{{- end -}}

{{/* Namespaces to read when watchNamespaces is set: those and the release's own. */}}
{{- define "gw.watchedNamespaces" -}}
{{- $all := append .Values.watchNamespaces .Release.Namespace | uniq -}}
{{- toJson $all -}}
{{- end -}}
