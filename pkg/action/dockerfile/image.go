package dockerfile

// The image settings of the final stage of the generated Dockerfile (when
// its base is not scratch), for builders that make the same image without
// running the Dockerfile (opm build catalog). dockerfile_image_test.go
// checks that [Render] writes exactly these.

// Entrypoint returns the ENTRYPOINT the Dockerfile sets: ["/bin/opm"].
func Entrypoint() []string { return []string{"/bin/opm"} }

// Cmd returns the CMD the Dockerfile sets:
// ["serve", "/configs", "--cache-dir=/tmp/cache"].
func Cmd() []string { return []string{"serve", "/configs", "--cache-dir=/tmp/cache"} }
