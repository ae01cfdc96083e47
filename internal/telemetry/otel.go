package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// OTelOptions configure SetupOTel.
type OTelOptions struct {
	// Service is the default service.name (OTEL_SERVICE_NAME and
	// OTEL_RESOURCE_ATTRIBUTES win); Version the service.version.
	Service, Version string
	// Getenv reads the environment (nil: os.Getenv), for tests.
	Getenv func(string) string
}

// OTel holds the OpenTelemetry providers a command set up from the OTEL_*
// environment: each is nil when its signal is not exported.
type OTel struct {
	// Tracer makes the decision spans (nil: traces are off).
	Tracer trace.Tracer
	// Logs is the provider logs are bridged to (nil: logs are not sent
	// over OTLP).
	Logs log.LoggerProvider

	shutdown []func(context.Context) error
}

// Enabled reports whether any signal is exported.
func (o *OTel) Enabled() bool { return o != nil && (o.Tracer != nil || o.Logs != nil) }

// Shutdown flushes and stops the exporters.
func (o *OTel) Shutdown(ctx context.Context) error {
	if o == nil {
		return nil
	}
	var errs []error
	for _, f := range o.shutdown {
		errs = append(errs, f(ctx))
	}
	return errors.Join(errs...)
}

// SetupOTel sets up OTLP/HTTP export of traces and logs as the standard
// environment variables say. A signal is exported when
// OTEL_{TRACES,LOGS}_EXPORTER is "otlp", or when it is unset and an OTLP
// endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT or the signal's own
// OTEL_EXPORTER_OTLP_{TRACES,LOGS}_ENDPOINT); "none", or
// OTEL_SDK_DISABLED=true, turns it off. So nothing is sent anywhere unless
// the operator asked. The exporters themselves read the endpoint, headers,
// timeout, compression and TLS variables; the SDK reads the sampler
// (OTEL_TRACES_SAMPLER) and batching (OTEL_BSP_*, OTEL_BLRP_*) ones.
// Only the http/protobuf protocol is supported: another is an error, so a
// misconfiguration is seen at start, not as silently missing data.
func SetupOTel(ctx context.Context, opts OTelOptions) (*OTel, error) {
	env := opts.Getenv
	if env == nil {
		env = os.Getenv
	}
	o := &OTel{}
	if strings.EqualFold(strings.TrimSpace(env("OTEL_SDK_DISABLED")), "true") {
		return o, nil
	}
	traces, err := exported(env, "TRACES")
	if err != nil {
		return nil, err
	}
	logs, err := exported(env, "LOGS")
	if err != nil {
		return nil, err
	}
	if !traces && !logs {
		return o, nil
	}
	service := opts.Service
	if service == "" {
		service = "statewright"
	}
	// The environment (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) is
	// merged last, so it wins over the defaults.
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", service), attribute.String("service.version", opts.Version)),
		resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil && res == nil {
		return nil, fmt.Errorf("telemetry: OpenTelemetry resource: %w", err)
	}
	if traces {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("telemetry: OTLP trace exporter: %w", err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		o.Tracer = tp.Tracer("github.com/statewright-go/statewright")
		o.shutdown = append(o.shutdown, tp.Shutdown)
	}
	if logs {
		exp, err := otlploghttp.New(ctx)
		if err != nil {
			o.Shutdown(ctx)
			return nil, fmt.Errorf("telemetry: OTLP log exporter: %w", err)
		}
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)), sdklog.WithResource(res))
		o.Logs = lp
		o.shutdown = append(o.shutdown, lp.Shutdown)
	}
	return o, nil
}

// exported reports whether signal (TRACES, LOGS) is to be exported over
// OTLP, per the environment.
func exported(env func(string) string, signal string) (bool, error) {
	switch v := strings.ToLower(strings.TrimSpace(env("OTEL_" + signal + "_EXPORTER"))); v {
	case "none":
		return false, nil
	case "otlp":
	case "":
		if env("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && env("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") == "" {
			return false, nil
		}
	default:
		return false, fmt.Errorf("telemetry: OTEL_%s_EXPORTER=%s is not supported (want otlp or none)", signal, v)
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := strings.TrimSpace(env(name)); p != "" {
			if p != "http/protobuf" {
				return false, fmt.Errorf("telemetry: %s=%s is not supported (statewright exports OTLP over http/protobuf)", name, p)
			}
			break
		}
	}
	return true, nil
}
