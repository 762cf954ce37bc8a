{{- define "fleet.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "fleet.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "fleet.selectorLabels" -}}
app.kubernetes.io/name: {{ include "fleet.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "fleet.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "fleet.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: karmada
{{- end -}}

{{- define "fleet.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "fleet.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "fleet.containerPort" -}}
{{- if .Values.tls.enabled -}}8443{{- else -}}8080{{- end -}}
{{- end -}}

{{/* fleet.yaml: the operator's config plus what the chart itself wires (control plane, serving) */}}
{{- define "fleet.config" -}}
{{- if not .Values.config.authentication -}}
{{- fail "config.authentication: configure at least one authenticator (oidc, edge, staticTokens, x509 or frontProxy); the fleet refuses to start without one" -}}
{{- end -}}
{{- if and .Values.tls.enabled (not .Values.tls.secretName) -}}
{{- fail "tls.secretName: tls.enabled needs a kubernetes.io/tls Secret" -}}
{{- end -}}
{{- $kc := dict "path" "/etc/karmada/kubeconfig" -}}
{{- if .Values.karmada.context -}}{{- $_ := set $kc "context" .Values.karmada.context -}}{{- end -}}
{{- $cfg := deepCopy .Values.config -}}
{{- $_ := set $cfg "controlPlane" (dict "kubeconfig" $kc) -}}
{{- if .Values.tls.enabled -}}
{{- $_ := set $cfg "serving" (dict "certFile" "/etc/fleet/tls/tls.crt" "keyFile" "/etc/fleet/tls/tls.key") -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}
