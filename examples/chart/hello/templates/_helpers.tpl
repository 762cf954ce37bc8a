{{- define "hello.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride -}}
{{- end -}}
