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

{{/* How a component reaches xDS: with its certificates (mutual TLS), or in plaintext when
xds.tls is off. Container arguments. */}}
{{- define "gw.xdsArgs" -}}
{{- if .Values.xds.tls -}}
- --xds-certs=/etc/gw/xds
{{- else -}}
- --insecure-xds
{{- end -}}
{{- end -}}

{{/* The mount of a component's xDS certificates (Secret gw-xds-<party>, from gw-certgen). */}}
{{- define "gw.xdsMount" -}}
{{- if .Values.xds.tls -}}
- name: xds-certs
  mountPath: /etc/gw/xds
  readOnly: true
{{- end -}}
{{- end -}}

{{/* The volume of a component's xDS certificates: (dict "root" $ "party" "extauth"). */}}
{{- define "gw.xdsVolume" -}}
{{- if .root.Values.xds.tls -}}
- name: xds-certs
  secret:
    secretName: gw-xds-{{ .party }}
{{- end -}}
{{- end -}}
