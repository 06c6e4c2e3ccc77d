package graph

import "fmt"

// ChainFrom walks from the entry called name along replaces, by the rules
// of [Channel.ReplacesChain] (stop at a target that any entry skips or that
// is not an entry; revisiting an entry is a *CycleError), and returns the
// entries visited, name first. It is the replaces chain the channel would
// have if name were its head, which tells apart the candidate heads of a
// channel that has several.
func (c *Channel) ChainFrom(name string) ([]string, error) {
	idx := c.index()
	i, ok := idx[name]
	if !ok {
		return nil, fmt.Errorf("channel %q has no entry %q", c.Name, name)
	}
	skipped := c.skipped()
	chain := []string{name}
	pos := map[string]int{name: 0}
	cur := c.Entries[i]
	for {
		next := cur.Replaces
		if j, ok := pos[next]; ok {
			path := append(append([]string(nil), chain[j:]...), next)
			return nil, &CycleError{Path: path}
		}
		if skipped[next] {
			break
		}
		j, ok := idx[next]
		if !ok {
			break
		}
		pos[next] = len(chain)
		chain = append(chain, next)
		cur = c.Entries[j]
	}
	return chain, nil
}
